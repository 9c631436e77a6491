"""Acceptance test for j08_daterange_add (copied into tests/ only at check time)."""

from datetime import date


def _count_workdays():
    from datespan.workdays import count_workdays

    return count_workdays


def test_a_full_week_has_five_workdays():
    count_workdays = _count_workdays()
    assert count_workdays(date(2024, 1, 1), date(2024, 1, 7)) == 5  # Monday to Sunday


def test_weekend_only_has_none():
    count_workdays = _count_workdays()
    assert count_workdays(date(2024, 1, 6), date(2024, 1, 7)) == 0  # Saturday, Sunday


def test_both_ends_count():
    count_workdays = _count_workdays()
    assert count_workdays(date(2024, 1, 5), date(2024, 1, 8)) == 2  # Friday to Monday
    assert count_workdays(date(2024, 1, 1), date(2024, 1, 1)) == 1  # one Monday
    assert count_workdays(date(2024, 1, 1), date(2024, 1, 31)) == 23


def test_end_before_start_gives_zero():
    count_workdays = _count_workdays()
    assert count_workdays(date(2024, 1, 8), date(2024, 1, 1)) == 0
