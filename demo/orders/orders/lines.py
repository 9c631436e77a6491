"""Order lines: one product (SKU) with a quantity and a unit price."""

from dataclasses import dataclass

from orders.errors import InvalidLineError


@dataclass(frozen=True)
class OrderLine:
    """One line of an order.

    sku: the product code, e.g. "PEN-BLUE".
    quantity: how many units; must be at least 1.
    unit_price: price of one unit; must not be negative.
    category: the tax category (see orders/tax.py).
    """

    sku: str
    quantity: int
    unit_price: float
    category: str = "general"

    def __post_init__(self) -> None:
        if self.quantity < 1:
            raise InvalidLineError(f"{self.sku}: quantity must be at least 1, got {self.quantity}")
        if self.unit_price < 0:
            raise InvalidLineError(f"{self.sku}: unit price must not be negative, got {self.unit_price}")

    def total(self) -> float:
        """Price of the whole line: quantity times unit price, rounded to cents."""
        return round(self.quantity * self.unit_price, 2)
