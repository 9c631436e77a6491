"""Acceptance test for the demo "add" job (copied into tests/ only at check time)."""

import pytest


def _shipping_cost():
    from orders.shipping import shipping_cost

    return shipping_cost


def test_parcels_up_to_2_kg_cost_the_base_price():
    shipping_cost = _shipping_cost()
    assert shipping_cost(1) == pytest.approx(5.0)
    assert shipping_cost(2) == pytest.approx(5.0)


def test_each_kg_above_2_costs_extra():
    shipping_cost = _shipping_cost()
    assert shipping_cost(4) == pytest.approx(8.0)
    assert shipping_cost(3.5) == pytest.approx(7.25)
