"""Order subtotal and discounts."""

from orders.lines import OrderLine

BULK_THRESHOLD = 10  # a line with at least this many units gets the bulk discount
BULK_RATE = 0.10  # bulk discount: 10% off the line total


def subtotal(lines: list[OrderLine]) -> float:
    """Sum of all line totals, before any discount."""
    return round(sum(line.total() for line in lines), 2)


def bulk_discount(line: OrderLine) -> float:
    """Bulk discount for one line: BULK_RATE of the line total when the line has
    at least BULK_THRESHOLD units, otherwise 0.0."""
    if line.quantity >= BULK_THRESHOLD:
        return round(line.total() * BULK_RATE, 2)
    return 0.0


def apply_percentage_discount(amount: float, percent: float) -> float:
    """Take `percent` percent off `amount`. `percent` must be between 0 and 100."""
    if not 0 <= percent <= 100:
        raise ValueError(f"percent must be between 0 and 100, got {percent}")
    return round(amount * (1 - percent / 100), 2)


def order_total(lines: list[OrderLine], percent: float = 0) -> float:
    """Subtotal minus the bulk discounts, then minus a percentage discount (a coupon)."""
    after_bulk = subtotal(lines) - sum(bulk_discount(line) for line in lines)
    return apply_percentage_discount(after_bulk, percent)
