from textkit.shorten import shorten


def test_short_text_is_unchanged():
    assert shorten("a short line", 20) == "a short line"


def test_whitespace_is_collapsed():
    assert shorten("a   short\n line", 20) == "a short line"


def test_long_text_is_cut_at_a_word_boundary():
    assert shorten("the quick brown fox jumps", 15) == "the quick..."
