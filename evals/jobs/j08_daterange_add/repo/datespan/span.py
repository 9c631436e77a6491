"""A range of calendar days; both the start and the end day belong to it."""

from dataclasses import dataclass
from datetime import date, timedelta


@dataclass(frozen=True)
class DateRange:
    start: date
    end: date

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"end {self.end} is before start {self.start}")

    def days(self) -> int:
        """Number of days in the range, counting both ends (a one-day range has 1)."""
        return (self.end - self.start).days + 1

    def __contains__(self, day: date) -> bool:
        return self.start <= day <= self.end

    def overlaps(self, other: "DateRange") -> bool:
        """True when the two ranges share at least one day."""
        return self.start <= other.end and other.start <= self.end

    def each_day(self) -> list[date]:
        """Every day of the range, in order."""
        return [self.start + timedelta(days=i) for i in range(self.days())]
