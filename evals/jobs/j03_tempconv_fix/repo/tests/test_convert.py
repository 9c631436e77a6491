import pytest

from thermo.convert import c_to_f, c_to_k, convert, f_to_c, k_to_c


def test_celsius_to_fahrenheit():
    assert c_to_f(0) == 32
    assert c_to_f(100) == 212


def test_fahrenheit_to_celsius():
    assert f_to_c(32) == 0
    assert f_to_c(212) == 100


def test_celsius_kelvin_round_trip():
    assert c_to_k(0) == pytest.approx(273.15)
    assert k_to_c(273.15) == pytest.approx(0)


def test_below_absolute_zero_is_rejected():
    with pytest.raises(ValueError):
        c_to_k(-300)
    with pytest.raises(ValueError):
        k_to_c(-1)


def test_convert_between_any_two_units():
    assert convert(100, "C", "F") == 212
    assert convert(0, "K", "C") == -273.15


def test_unknown_unit_is_rejected():
    with pytest.raises(ValueError):
        convert(1, "C", "X")
