import pytest

from grades.calc import average, letter_grade, weighted_average


def test_average_of_whole_numbers():
    assert average([80, 90, 100]) == 90


def test_average_keeps_the_fraction():
    assert average([90, 85, 80, 86]) == 85.25


def test_average_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        average([])


def test_weighted_average():
    assert weighted_average([80, 100], [3, 1]) == 85


def test_letter_grade_boundaries():
    assert letter_grade(90) == "A"
    assert letter_grade(89.99) == "B"
    assert letter_grade(70) == "C"
    assert letter_grade(60) == "D"
    assert letter_grade(59.5) == "F"
