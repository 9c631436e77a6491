import pytest

from orders.errors import UnknownCategoryError
from orders.lines import OrderLine
from orders.tax import line_tax, order_tax, tax_rate


def test_general_rate():
    assert tax_rate("general") == 0.20


def test_unknown_category_raises():
    with pytest.raises(UnknownCategoryError):
        tax_rate("spaceships")


def test_line_tax_for_books():
    assert line_tax(OrderLine("NOVEL", 2, 10.00, "books")) == 1.0


def test_order_tax_sums_line_taxes():
    lines = [OrderLine("NOTEBOOK", 1, 10.00), OrderLine("NOVEL", 2, 10.00, "books")]
    assert order_tax(lines) == 3.0
