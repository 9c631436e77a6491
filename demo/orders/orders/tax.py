"""Tax on orders. Each product category has its own tax rate."""

from orders.errors import UnknownCategoryError
from orders.lines import OrderLine

TAX_RATES = {
    "general": 0.20,
    "food": 0.07,
    "books": 0.05,
}


def tax_rate(category: str) -> float:
    """The tax rate for a category, e.g. 0.20 for "general". Unknown categories raise."""
    if category not in TAX_RATES:
        raise UnknownCategoryError(f"no tax rate for category {category!r}")
    return TAX_RATES[category]


def line_tax(line: OrderLine) -> float:
    """Tax for one line: the line total times the rate of its category, rounded to cents."""
    return round(line.total() * tax_rate(line.category), 2)


def order_tax(lines: list[OrderLine]) -> float:
    """Tax for a whole order: the sum of the line taxes."""
    return round(sum(line_tax(line) for line in lines), 2)
