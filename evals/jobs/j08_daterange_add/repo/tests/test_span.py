from datetime import date

import pytest

from datespan.span import DateRange


def test_days_counts_both_ends():
    assert DateRange(date(2024, 3, 1), date(2024, 3, 10)).days() == 10
    assert DateRange(date(2024, 3, 1), date(2024, 3, 1)).days() == 1


def test_end_before_start_is_rejected():
    with pytest.raises(ValueError):
        DateRange(date(2024, 3, 2), date(2024, 3, 1))


def test_contains_includes_the_ends():
    span = DateRange(date(2024, 3, 1), date(2024, 3, 10))
    assert date(2024, 3, 1) in span
    assert date(2024, 3, 10) in span
    assert date(2024, 3, 11) not in span


def test_ranges_sharing_one_day_overlap():
    march = DateRange(date(2024, 3, 1), date(2024, 3, 31))
    assert march.overlaps(DateRange(date(2024, 3, 31), date(2024, 4, 5)))
    assert not march.overlaps(DateRange(date(2024, 4, 1), date(2024, 4, 5)))


def test_each_day_crosses_month_end():
    span = DateRange(date(2024, 2, 28), date(2024, 3, 1))
    assert span.each_day() == [date(2024, 2, 28), date(2024, 2, 29), date(2024, 3, 1)]
