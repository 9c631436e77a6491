import pytest

from grades.report import class_report, top_student

CLASS = {"zoe": [70, 75, 80], "adam": [95, 90, 100], "mia": [60, 55, 50]}


def test_class_report_is_sorted_by_name():
    assert class_report(CLASS) == ["adam: 95.00 A", "mia: 55.00 F", "zoe: 75.00 C"]


def test_top_student():
    assert top_student(CLASS) == "adam"


def test_top_student_tie_goes_to_first_name():
    assert top_student({"bea": [80], "al": [80]}) == "al"


def test_top_student_of_empty_class_is_an_error():
    with pytest.raises(ValueError):
        top_student({})
