"""Order handling: order lines, pricing, tax and inventory."""

from orders.errors import InvalidLineError, OrderError, OutOfStockError, UnknownCategoryError
from orders.inventory import Inventory
from orders.lines import OrderLine

__all__ = [
    "Inventory",
    "InvalidLineError",
    "OrderError",
    "OrderLine",
    "OutOfStockError",
    "UnknownCategoryError",
]
