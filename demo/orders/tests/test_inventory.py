import pytest

from orders.errors import OutOfStockError
from orders.inventory import Inventory


def test_available_is_stock_for_new_inventory():
    assert Inventory({"PEN-BLUE": 5}).available("PEN-BLUE") == 5


def test_unknown_sku_has_nothing_available():
    assert Inventory().available("GHOST") == 0


def test_add_stock():
    inventory = Inventory({"PEN-BLUE": 5})
    inventory.add_stock("PEN-BLUE", 3)
    assert inventory.available("PEN-BLUE") == 8


def test_reserve_reduces_available():
    inventory = Inventory({"PEN-BLUE": 5})
    inventory.reserve("PEN-BLUE", 2)
    assert inventory.available("PEN-BLUE") == 3


def test_reserve_more_than_available_raises():
    inventory = Inventory({"PEN-BLUE": 5})
    with pytest.raises(OutOfStockError) as excinfo:
        inventory.reserve("PEN-BLUE", 6)
    assert excinfo.value.available == 5


def test_release_gives_stock_back():
    inventory = Inventory({"PEN-BLUE": 5})
    inventory.reserve("PEN-BLUE", 4)
    inventory.release("PEN-BLUE", 4)
    assert inventory.available("PEN-BLUE") == 5


def test_release_more_than_reserved_raises():
    inventory = Inventory({"PEN-BLUE": 5})
    inventory.reserve("PEN-BLUE", 1)
    with pytest.raises(ValueError):
        inventory.release("PEN-BLUE", 2)
