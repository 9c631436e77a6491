from datetime import date

from datespan.parse import format_range, parse_range
from datespan.span import DateRange


def test_parse_two_dates():
    assert parse_range("2024-03-01..2024-03-10") == DateRange(date(2024, 3, 1), date(2024, 3, 10))


def test_parse_single_day_and_spaces():
    assert parse_range(" 2024-03-01 ") == DateRange(date(2024, 3, 1), date(2024, 3, 1))


def test_format_is_the_inverse_of_parse():
    for text in ["2024-03-01..2024-03-10", "2024-12-31"]:
        assert format_range(parse_range(text)) == text
