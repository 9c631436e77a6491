"""Coupon codes that take a percentage off the cart total."""

COUPONS = {
    "WELCOME5": 5,
    "SAVE10": 10,
    "HALFPRICE": 50,
}


def discount_percent(code: str) -> int:
    """The percentage of a coupon code (case-insensitive, surrounding spaces ignored); 0 when unknown."""
    return COUPONS.get(code.strip().upper(), 0)


def apply_coupon(total: float, code: str) -> float:
    """`total` minus the coupon's percentage, rounded to cents."""
    return round(total * (100 - discount_percent(code)) / 100, 2)
