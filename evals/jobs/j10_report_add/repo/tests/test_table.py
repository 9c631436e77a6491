from report.table import column_widths, format_table


def test_column_widths_use_the_longest_cell():
    assert column_widths(["item", "qty"], [["notebook", 3], ["pen", 12]]) == [8, 3]


def test_format_table_aligns_columns():
    text = format_table(["item", "qty", "price"], [["notebook", 3, 4.5], ["pen", 12, 0.99]])
    assert text.splitlines() == [
        "item      qty  price",
        "--------  ---  -----",
        "notebook    3   4.50",
        "pen        12   0.99",
    ]


def test_table_without_rows_has_header_and_rule():
    assert format_table(["a", "bb"], []) == "a  bb\n-  --"
