import pytest

from rpncalc.tokens import RPNError, tokenize


def test_numbers_become_floats_and_operators_stay():
    assert tokenize("3 4.5 +") == [3.0, 4.5, "+"]


def test_extra_whitespace_is_ignored():
    assert tokenize("  1\t2  * ") == [1.0, 2.0, "*"]


def test_unknown_word_is_an_error():
    with pytest.raises(RPNError):
        tokenize("1 2 plus")
