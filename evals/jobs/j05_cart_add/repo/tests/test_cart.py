import pytest

from shop.cart import Cart


def test_empty_cart():
    cart = Cart()
    assert cart.total() == 0
    assert cart.item_count() == 0


def test_add_defaults_to_one_unit():
    cart = Cart()
    cart.add("pear", 0.80)
    assert cart.items["pear"].quantity == 1


def test_adding_the_same_item_twice_increases_quantity():
    cart = Cart()
    cart.add("apple", 0.50, 2)
    cart.add("apple", 0.50, 3)
    assert cart.items["apple"].quantity == 5
    assert cart.item_count() == 5


def test_total_sums_line_totals():
    cart = Cart()
    cart.add("apple", 0.50, 3)
    cart.add("bread", 2.25)
    assert cart.total() == 3.75


def test_remove_item():
    cart = Cart()
    cart.add("apple", 0.50, 3)
    cart.remove("apple")
    assert cart.items == {}


def test_zero_quantity_is_rejected():
    with pytest.raises(ValueError):
        Cart().add("apple", 0.50, 0)
