"""The layer `clozetest`: the failing test shown before a hole's file, and how the embedded model is given it."""

from pyharness.models.llamacpp import repo_layout
from pyharness.trials.clozetest import failing_test_file
from pyharness.workspace.tree import Workspace

TEST_FILE = '''import pytest

from shop.prices import label


class TestLabel:
    @pytest.mark.parametrize("cents, text", [(0, "free"), (150, "$1.50")])
    def test_label(self, cents, text):
        assert label(cents) == text

    def test_other(self):
        assert True
'''
TRACEBACK = '''_____ TestLabel.test_label[0-free] _____

    def test_label(self, cents, text):
>       assert label(cents) == text
E       AssertionError: assert '$0.00' == 'free'
E         - free
E         + $0.00

tests/test_prices.py:9: AssertionError
'''


def test_the_failing_test_is_shown_with_its_imports_cases_class_and_what_pytest_said(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_prices.py").write_text(TEST_FILE)
    ws = Workspace(tmp_path)
    [(path, text)] = failing_test_file(ws, "tests/test_prices.py::TestLabel::test_label[0-free]", TRACEBACK)
    assert path == "tests/test_prices.py"
    assert text == '''import pytest
from shop.prices import label

class TestLabel:
    @pytest.mark.parametrize("cents, text", [(0, "free"), (150, "$1.50")])
    def test_label(self, cents, text):
        assert label(cents) == text

# pytest: tests/test_prices.py::TestLabel::test_label[0-free] fails:
# E       AssertionError: assert '$0.00' == 'free'
# E         - free
# E         + $0.00
'''


def test_a_test_that_cannot_be_found_shows_nothing(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_prices.py").write_text(TEST_FILE)
    ws = Workspace(tmp_path)
    assert failing_test_file(ws, "tests/test_prices.py::test_gone", TRACEBACK) == ()
    assert failing_test_file(ws, "tests/test_missing.py::test_label", TRACEBACK) == ()


def test_the_embedded_model_reads_the_files_in_qwens_repository_layout():
    def text_tokens(text):  # one token a character, so the layout reads back as text
        return list(text)

    tokens = repo_layout("<R>", "<F>", text_tokens, (("tests/test_a.py", "def test_a():\n    assert f()\n\n"),),
                         "pkg/a.py")
    assert "".join(tokens) == "<R>repo\n<F>tests/test_a.py\ndef test_a():\n    assert f()\n<F>pkg/a.py\n"
