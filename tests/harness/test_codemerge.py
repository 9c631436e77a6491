"""Merging functions sent by a model into the file they belong to, by name."""

from pyharness.harness.codemerge import merge_functions

OLD = '''"""A module."""

LIMIT = 3


def top(x):
    return x + 1


class Box:
    def __init__(self, items):
        self.items = items

    @property
    def full(self):
        return len(self.items) > LIMIT
'''


def test_a_top_level_function_replaces_its_namesake_and_keeps_the_rest():
    merged = merge_functions(OLD, "def top(x):\n    return x + 2\n")
    assert merged == OLD.replace("return x + 1", "return x + 2")


def test_a_method_sent_without_its_class_goes_back_indented_with_its_decorator():
    snippet = "@property\ndef full(self):\n    return len(self.items) >= LIMIT\n"
    assert merge_functions(OLD, snippet) == OLD.replace("> LIMIT", ">= LIMIT")


def test_a_method_sent_inside_its_class_and_a_function_together():
    snippet = ("class Box:\n    @property\n    def full(self):\n        return not self.items\n\n\n"
               "def top(x):\n    return -x\n")
    merged = merge_functions(OLD, snippet)
    assert "return not self.items" in merged and "return -x" in merged and "self.items = items" in merged
    assert merged.count("def full") == 1 and merged.count("def top") == 1


def test_nothing_known_or_broken_code_is_none():
    assert merge_functions(OLD, "def other():\n    return 1\n") is None
    assert merge_functions(OLD, "def top(x:\n") is None
    assert merge_functions("def f(:\n", "def f():\n    pass\n") is None
