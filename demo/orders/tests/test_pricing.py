import pytest

from orders.lines import OrderLine
from orders.pricing import apply_percentage_discount, bulk_discount, order_total, subtotal


def test_subtotal_sums_line_totals():
    lines = [OrderLine("PEN-BLUE", 2, 2.50), OrderLine("NOTEBOOK", 1, 4.00)]
    assert subtotal(lines) == 9.0


def test_subtotal_of_empty_order_is_zero():
    assert subtotal([]) == 0


def test_bulk_discount_applies():
    line = OrderLine("PEN-BLUE", 10, 2.50)  # exactly the threshold: 10 units
    assert bulk_discount(line) == 2.5


def test_no_bulk_discount_below_threshold():
    assert bulk_discount(OrderLine("PEN-BLUE", 9, 2.50)) == 0.0


def test_percentage_discount():
    assert apply_percentage_discount(80.0, 25) == 60.0


def test_percentage_discount_rejects_more_than_100():
    with pytest.raises(ValueError):
        apply_percentage_discount(80.0, 120)


def test_order_total_combines_bulk_and_percentage_discounts():
    lines = [OrderLine("PEN-BLUE", 20, 1.00), OrderLine("DESK-LAMP", 1, 30.00)]
    # subtotal 50.00, bulk discount 2.00 on the pens, then 10% off 48.00
    assert order_total(lines, percent=10) == 43.2
