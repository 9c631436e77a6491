"""Stock per SKU, with reservations for orders that are not shipped yet."""

from orders.errors import OutOfStockError


class Inventory:
    """Tracks how many units of each SKU are in stock and how many are reserved."""

    def __init__(self, stock: dict[str, int] | None = None):
        self._stock: dict[str, int] = dict(stock or {})
        self._reserved: dict[str, int] = {}

    def add_stock(self, sku: str, quantity: int) -> None:
        """Put `quantity` more units of `sku` into stock."""
        if quantity < 1:
            raise ValueError(f"quantity must be at least 1, got {quantity}")
        self._stock[sku] = self._stock.get(sku, 0) + quantity

    def available(self, sku: str) -> int:
        """Units of `sku` in stock and not reserved. Unknown SKUs have 0."""
        return self._stock.get(sku, 0) - self._reserved.get(sku, 0)

    def reserve(self, sku: str, quantity: int) -> None:
        """Reserve `quantity` units of `sku`; raises OutOfStockError when short."""
        available = self.available(sku)
        if quantity > available:
            raise OutOfStockError(sku, quantity, available)
        self._reserved[sku] = self._reserved.get(sku, 0) + quantity

    def release(self, sku: str, quantity: int) -> None:
        """Give back `quantity` reserved units of `sku`, e.g. when an order is cancelled."""
        reserved = self._reserved.get(sku, 0)
        if quantity > reserved:
            raise ValueError(f"cannot release {quantity} of {sku}: only {reserved} reserved")
        self._reserved[sku] = reserved - quantity
