import pytest

from orders.errors import InvalidLineError
from orders.lines import OrderLine


def test_line_total_is_quantity_times_unit_price():
    assert OrderLine("PEN-BLUE", 4, 2.50).total() == 10.0


def test_line_total_is_rounded_to_cents():
    assert OrderLine("CLIP", 3, 0.1).total() == 0.3


def test_default_category_is_general():
    assert OrderLine("PEN-BLUE", 1, 2.50).category == "general"


def test_zero_quantity_is_rejected():
    with pytest.raises(InvalidLineError):
        OrderLine("PEN-BLUE", 0, 2.50)


def test_negative_unit_price_is_rejected():
    with pytest.raises(InvalidLineError):
        OrderLine("PEN-BLUE", 1, -1.0)
