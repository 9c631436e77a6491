"""Acceptance test for j10_report_add (copied into tests/ only at check time)."""


def _to_csv():
    from report.csvout import to_csv

    return to_csv


def test_header_and_rows_joined_by_commas():
    to_csv = _to_csv()
    assert to_csv(["name", "qty"], [["pen", 3], ["ink", 12]]) == "name,qty\npen,3\nink,12\n"


def test_no_rows_gives_just_the_header_line():
    to_csv = _to_csv()
    assert to_csv(["a", "b"], []) == "a,b\n"


def test_value_with_a_comma_is_quoted():
    to_csv = _to_csv()
    assert to_csv(["name", "city"], [["Smith, Ann", "Oslo"]]) == 'name,city\n"Smith, Ann",Oslo\n'


def test_inner_double_quotes_are_doubled():
    to_csv = _to_csv()
    assert to_csv(["quote"], [['say "hi"']]) == 'quote\n"say ""hi"""\n'


def test_values_are_converted_with_str():
    to_csv = _to_csv()
    assert to_csv(["x", "y"], [[1.5, None]]) == "x,y\n1.5,None\n"
