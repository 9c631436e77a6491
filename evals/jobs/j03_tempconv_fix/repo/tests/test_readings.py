import pytest

from thermo.readings import daily_range, mean_celsius, parse_reading


def test_parse_celsius_reading():
    assert parse_reading("21.5C") == 21.5


def test_parse_fahrenheit_reading():
    assert parse_reading("50F") == 10.0


def test_parse_reading_with_space_and_lower_case_unit():
    assert parse_reading(" 300 k ") == 26.85


def test_reading_without_unit_is_rejected():
    with pytest.raises(ValueError):
        parse_reading("21.5")


def test_daily_range_and_mean_in_celsius():
    readings = ["10C", "14C", "285.15K"]
    assert daily_range(readings) == (10, 14)
    assert mean_celsius(readings) == 12.0
