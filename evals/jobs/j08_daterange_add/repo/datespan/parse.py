"""Read date ranges written as "2024-03-01..2024-03-10" or a single day "2024-03-01"."""

from datetime import date

from datespan.span import DateRange


def parse_range(text: str) -> DateRange:
    """A DateRange from "YYYY-MM-DD..YYYY-MM-DD" or "YYYY-MM-DD" (a one-day range); spaces are ignored."""
    cleaned = text.replace(" ", "")
    start_text, sep, end_text = cleaned.partition("..")
    start = date.fromisoformat(start_text)
    end = date.fromisoformat(end_text) if sep else start
    return DateRange(start, end)


def format_range(span: DateRange) -> str:
    """The inverse of parse_range: "YYYY-MM-DD..YYYY-MM-DD", or one date for a one-day range."""
    if span.start == span.end:
        return span.start.isoformat()
    return f"{span.start.isoformat()}..{span.end.isoformat()}"
