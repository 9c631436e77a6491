import pytest

from rpncalc.machine import apply, evaluate
from rpncalc.tokens import RPNError


def test_single_number():
    assert evaluate("42") == 42.0


def test_addition_and_multiplication():
    assert evaluate("3 4 + 2 *") == 14.0


def test_subtraction_takes_the_first_number_first():
    assert evaluate("10 4 -") == 6.0


def test_division_takes_the_first_number_first():
    assert evaluate("12 3 /") == 4.0


def test_division_by_zero_is_an_error():
    with pytest.raises(RPNError):
        apply("/", 1.0, 0.0)


def test_missing_operand_is_an_error():
    with pytest.raises(RPNError):
        evaluate("1 +")


def test_leftover_numbers_are_an_error():
    with pytest.raises(RPNError):
        evaluate("1 2")
