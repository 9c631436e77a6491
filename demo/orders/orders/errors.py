"""Exceptions raised by the orders package."""


class OrderError(Exception):
    """Base class for all errors in the orders package."""


class InvalidLineError(OrderError):
    """An order line has a bad quantity or price."""


class UnknownCategoryError(OrderError):
    """A product category has no tax rate."""


class OutOfStockError(OrderError):
    """Not enough stock to reserve the requested quantity."""

    def __init__(self, sku: str, requested: int, available: int):
        super().__init__(f"cannot reserve {requested} of {sku}: only {available} available")
        self.sku = sku
        self.requested = requested
        self.available = available
