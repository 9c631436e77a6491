"""Acceptance test for j05_cart_add (copied into tests/ only at check time)."""

from shop.cart import Cart


def _receipt_lines():
    from shop.receipt import receipt_lines

    return receipt_lines


def test_receipt_of_an_empty_cart_is_just_the_total():
    receipt_lines = _receipt_lines()
    assert receipt_lines(Cart()) == ["TOTAL 0.00"]


def test_receipt_lists_items_in_order_then_the_total():
    receipt_lines = _receipt_lines()
    cart = Cart()
    cart.add("apple", 0.5, 3)
    cart.add("bread", 2.25)
    assert receipt_lines(cart) == [
        "3 x apple @ 0.50 = 1.50",
        "1 x bread @ 2.25 = 2.25",
        "TOTAL 3.75",
    ]


def test_receipt_uses_the_merged_quantity():
    receipt_lines = _receipt_lines()
    cart = Cart()
    cart.add("milk", 1.2, 2)
    cart.add("milk", 1.2)
    assert receipt_lines(cart) == ["3 x milk @ 1.20 = 3.60", "TOTAL 3.60"]
