from urlkit.query import build_query, first_value, parse_query


def test_parse_simple_pairs():
    assert parse_query("a=1&b=2") == {"a": ["1"], "b": ["2"]}


def test_leading_question_mark_and_empty_pairs_are_ignored():
    assert parse_query("?a=1&&b=2&") == {"a": ["1"], "b": ["2"]}


def test_repeated_keys_keep_all_values_in_order():
    assert parse_query("size=42&size=43") == {"size": ["42", "43"]}


def test_plus_means_space():
    assert parse_query("q=red+shoes") == {"q": ["red shoes"]}


def test_percent_escapes_are_decoded():
    assert parse_query("path=%2Fhome%2Fana&name=J%C3%BCrgen") == {"path": ["/home/ana"], "name": ["Jürgen"]}


def test_key_without_equals_sign_has_empty_value():
    assert parse_query("debug&x=1") == {"debug": [""], "x": ["1"]}


def test_first_value_with_default():
    assert first_value("a=1&a=2", "a") == "1"
    assert first_value("a=1", "b", "none") == "none"


def test_build_query_encodes_values():
    assert build_query({"q": "a&b c", "n": ["1", "2"]}) == "q=a%26b+c&n=1&n=2"
