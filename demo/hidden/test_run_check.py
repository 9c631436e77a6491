"""Check for the demo "run" job (copied into tests/ only at check time)."""

import pytest
from orders.lines import OrderLine
from orders.tax import line_tax, tax_rate


def test_food_rate_is_now_8_percent():
    assert tax_rate("food") == pytest.approx(0.08)
    assert line_tax(OrderLine("BREAD", 1, 10.00, "food")) == pytest.approx(0.8)


def test_other_rates_are_unchanged():
    assert tax_rate("general") == pytest.approx(0.20)
    assert tax_rate("books") == pytest.approx(0.05)
