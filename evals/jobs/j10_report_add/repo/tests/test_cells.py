from report.cells import format_cell, is_numeric


def test_none_is_empty():
    assert format_cell(None) == ""


def test_floats_have_two_decimals():
    assert format_cell(3.14159) == "3.14"
    assert format_cell(2.0) == "2.00"


def test_bools_are_yes_and_no():
    assert format_cell(True) == "yes"
    assert format_cell(False) == "no"


def test_ints_and_strings_are_plain():
    assert format_cell(42) == "42"
    assert format_cell("pen") == "pen"


def test_bools_are_not_numeric():
    assert is_numeric(3) and is_numeric(1.5)
    assert not is_numeric(True)
    assert not is_numeric("3")
