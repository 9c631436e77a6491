"""A shopping cart: items with a unit price and a quantity."""

from dataclasses import dataclass


@dataclass
class CartItem:
    name: str
    unit_price: float
    quantity: int

    def line_total(self) -> float:
        """unit_price * quantity, rounded to cents."""
        return round(self.unit_price * self.quantity, 2)


class Cart:
    """Items keyed by name, in the order they were first added."""

    def __init__(self) -> None:
        self.items: dict[str, CartItem] = {}

    def add(self, name: str, unit_price: float, quantity: int = 1) -> None:
        """Add `quantity` units; adding an item that is already in the cart increases its quantity."""
        if quantity < 1:
            raise ValueError(f"quantity must be at least 1, got {quantity}")
        if name in self.items:
            self.items[name].quantity += quantity
        else:
            self.items[name] = CartItem(name, unit_price, quantity)

    def remove(self, name: str) -> None:
        """Take the item out of the cart entirely; KeyError when it is not in the cart."""
        del self.items[name]

    def item_count(self) -> int:
        """Number of units in the cart (2 apples and 1 pear are 3 units)."""
        return sum(item.quantity for item in self.items.values())

    def total(self) -> float:
        """Sum of the line totals, rounded to cents."""
        return round(sum(item.line_total() for item in self.items.values()), 2)
