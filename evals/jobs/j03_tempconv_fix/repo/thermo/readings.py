"""Readings such as "21.5C" or "70F" from weather stations, summarised in Celsius."""

from thermo.convert import convert


def parse_reading(text: str) -> float:
    """A reading like "21.5C", " 70 F" or "300K" as degrees Celsius (rounded to 2 decimals)."""
    cleaned = text.strip().upper().replace(" ", "")
    if not cleaned or cleaned[-1] not in "CFK":
        raise ValueError(f"reading needs a unit C, F or K: {text!r}")
    return convert(float(cleaned[:-1]), cleaned[-1], "C")


def daily_range(readings: list[str]) -> tuple[float, float]:
    """(lowest, highest) of the readings, in Celsius."""
    if not readings:
        raise ValueError("no readings")
    values = [parse_reading(r) for r in readings]
    return min(values), max(values)


def mean_celsius(readings: list[str]) -> float:
    """Average of the readings in Celsius, rounded to 1 decimal."""
    if not readings:
        raise ValueError("no readings")
    values = [parse_reading(r) for r in readings]
    return round(sum(values) / len(values), 1)
