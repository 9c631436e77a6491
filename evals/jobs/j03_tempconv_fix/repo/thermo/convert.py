"""Convert temperatures between Celsius, Fahrenheit and Kelvin."""

ABSOLUTE_ZERO_C = -273.15


def c_to_f(celsius: float) -> float:
    """Celsius to Fahrenheit."""
    return celsius * 9 / 5 + 32


def f_to_c(fahrenheit: float) -> float:
    """Fahrenheit to Celsius."""
    return (fahrenheit - 32) * 5 / 9


def c_to_k(celsius: float) -> float:
    """Celsius to Kelvin; temperatures below absolute zero are rejected."""
    if celsius < ABSOLUTE_ZERO_C:
        raise ValueError(f"{celsius} °C is below absolute zero")
    return celsius - ABSOLUTE_ZERO_C


def k_to_c(kelvin: float) -> float:
    """Kelvin to Celsius; negative Kelvin values are rejected."""
    if kelvin < 0:
        raise ValueError(f"{kelvin} K is below absolute zero")
    return kelvin + ABSOLUTE_ZERO_C


def convert(value: float, source: str, target: str) -> float:
    """Convert `value` from unit `source` to unit `target` ("C", "F" or "K"), rounded to 2 decimals."""
    to_celsius = {"C": lambda v: v, "F": f_to_c, "K": k_to_c}
    from_celsius = {"C": lambda v: v, "F": c_to_f, "K": c_to_k}
    if source not in to_celsius or target not in from_celsius:
        raise ValueError(f"unknown unit: {source!r} or {target!r}")
    return round(from_celsius[target](to_celsius[source](value)), 2)
