"""Turn single values into the text shown in a report cell."""


def format_cell(value: object) -> str:
    """Text for one cell: None is empty, floats get 2 decimals, bools are "yes"/"no", the rest is str()."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def is_numeric(value: object) -> bool:
    """Numbers (but not bools) are right-aligned in tables."""
    return isinstance(value, int | float) and not isinstance(value, bool)
