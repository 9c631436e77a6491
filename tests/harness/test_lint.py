"""lint: a change that breaks a Python file is refused with the lines around the fault; lazy placeholders too."""

import warnings

import pytest

from pyharness.harness.lint import check_change, lazy_placeholder

OLD = '''"""Tax rules."""

RATE = 0.2


def tax(amount):
    return amount * RATE


def total(amount):
    return amount + tax(amount)
'''


def test_edit_that_breaks_syntax_is_refused_with_numbered_context() -> None:
    new = OLD.replace("def tax(amount):", "def tax(amount)")
    message = check_change("orders/tax.py", OLD, new)
    assert message is not None
    lines = message.splitlines()
    assert lines[0] == "Refused: orders/tax.py would no longer compile: SyntaxError at line 6: expected ':'"
    assert lines[1:8] == [
        "  3 | RATE = 0.2",
        "  4 | ",
        "  5 | ",
        "> 6 | def tax(amount)",
        "  7 |     return amount * RATE",
        "  8 | ",
        "  9 | ",
    ]
    assert lines[-1] == "Nothing was written. Fix the syntax and send the whole edit again."


def test_new_file_that_does_not_compile_is_refused() -> None:
    message = check_change("orders/new.py", None, "def f():\n    return (\n")
    assert message is not None
    assert message.startswith("Refused: orders/new.py would not compile: SyntaxError at line 2: '(' was never closed")
    assert "> 2 |     return (" in message


def test_indentation_error_and_null_bytes_are_refused() -> None:
    indent = check_change("a.py", OLD, OLD.replace("    return amount * RATE", "return amount * RATE"))
    assert indent is not None and "IndentationError at line 7" in indent
    null = check_change("a.py", OLD, "x = 1\0\n")
    assert null is not None and "null bytes" in null


def test_an_already_broken_file_may_be_edited() -> None:
    broken = OLD.replace("def tax(amount):", "def tax(amount)")
    assert check_change("orders/tax.py", broken, broken + "\nx = (\n") is None
    assert check_change("orders/tax.py", broken, OLD.replace("RATE = 0.2", "RATE = undefined_name")) is None


def test_non_python_files_are_not_checked() -> None:
    assert check_change("README.md", None, "def f(:") is None
    assert check_change("setup.cfg", "[x]", "def (") is None


def test_new_undefined_name_is_refused() -> None:
    new = OLD.replace("return amount * RATE", "return amount * rate")
    message = check_change("orders/tax.py", OLD, new)
    assert message is not None
    assert (
        message.splitlines()[0] == "Refused: this change to orders/tax.py adds an error: line 7: undefined name 'rate'"
    )
    assert ">  7 |     return amount * rate" in message and "  10 | def total(amount):" in message
    assert message.endswith("send the whole edit again.")


def test_undefined_name_already_in_the_old_file_is_not_refused() -> None:
    old = OLD.replace("return amount * RATE", "return amount * rate")
    moved = "import math\n\n\n" + old + "\n\ndef half(x):\n    return x / 2\n"
    assert check_change("orders/tax.py", old, moved) is None


def test_pyflakes_fatal_classes_are_refused() -> None:
    undefined_local = "X = 1\n\n\ndef f():\n    print(X)\n    X = 2\n    return X\n"
    message = check_change("a.py", OLD, undefined_local)
    assert message is not None and "referenced before assignment" in message
    export = "__all__ = ['missing']\n"
    message = check_change("a.py", OLD, export)
    assert message is not None and "undefined name 'missing' in __all__" in message


def test_warnings_are_not_errors() -> None:
    new = "import os\nimport sys\n\n\ndef f():\n    unused = 1\n    return f'{1}'\n"
    assert check_change("a.py", OLD, new) is None
    assert check_change("a.py", None, new) is None


def test_undefined_local_with_moved_line_numbers_is_not_new() -> None:
    old = "X = 1\n\n\ndef f():\n    print(X)\n    X = 2\n"
    assert check_change("a.py", old, "\n\n" + old) is None


def test_checking_prints_no_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_change("a.py", OLD, OLD + "\nPATTERN = '\\d+'\n") is None


@pytest.mark.parametrize(
    "line",
    [
        "# ... rest of code",
        "    # ... existing code ...",
        "... existing code ...",
        "    ...existing code...",
        "# rest of the code remains the same",
        "// ...",
        "# (unchanged)",
        "# previous code here",
        "#...",
        "    # Rest of the file unchanged",
        "# everything else stays the same",
        "# other methods unchanged",
        "# existing code",
        "# … existing code …",
        "/* rest of the implementation */",
    ],
)
def test_lazy_placeholders_are_found(line: str) -> None:
    content = f"def f():\n    return 1\n\n{line}\n\ndef g():\n    return 2\n"
    assert lazy_placeholder(content) == line.strip()


@pytest.mark.parametrize(
    "line",
    [
        "def f(): ...",
        "    ...",
        "x = ...",
        "class P(Protocol):\n    def run(self) -> None: ...",
        "# use the existing connection",
        "# previous value is kept for undo",
        "# the rest of the list is sorted",
        "# the value is unchanged after a retry",
        ">>> for x in range(2):\n...     print(x)",
        "# rest api client",
        "# TODO: handle the remaining cases",
        "total = a // b",
    ],
)
def test_legitimate_code_is_not_a_placeholder(line: str) -> None:
    assert lazy_placeholder(f"def f():\n    return 1\n\n{line}\n") is None


def test_missing_stdlib_imports_are_added() -> None:
    from pyharness.harness.imports import stdlib_imports

    # recorded (s012, s024 eval runs): programs refused for a missing `import sys` / datetime import
    program = "def main():\n    print('lines: ', len(sys.stdin.readlines()))\n"
    assert stdlib_imports(program) == ("import sys\n" + program, ["import sys"])
    dates = "def days(a):\n    return datetime.strptime(a, '%Y-%m-%d').date()\n"
    assert stdlib_imports(dates)[1] == ["from datetime import datetime"]
    assert stdlib_imports("x = datetime.date(2024, 1, 1)\n")[1] == ["import datetime"]
    assert stdlib_imports("c = Counter(re.findall('a', s))\n") is None  # `s` has no home: left to the refusal
    assert stdlib_imports("c = Counter(re.findall('a', 'aa'))\n")[1] == ["from collections import Counter",
                                                                         "import re"]
    assert stdlib_imports("print(1)\n") is None


def test_write_and_edit_get_the_stdlib_import_instead_of_a_refusal(tmp_path) -> None:
    from pyharness.actions import CORE
    from pyharness.actions.base import Context
    from pyharness.workspace.tree import Workspace

    ws = Workspace(tmp_path)
    ctx = Context(workspace=ws, lint=True)
    write = CORE["write"]
    seen = write.run(write.args(path="main.py", content="print(len(sys.stdin.read().split()))\n"), ctx)
    assert "The harness added the missing import(s): import sys." in seen.text
    assert (tmp_path / "main.py").read_text() == "import sys\nprint(len(sys.stdin.read().split()))\n"
    edit = CORE["edit"]
    seen = edit.run(edit.args(path="main.py", start=2, end=2, body="print(math.sqrt(4))\n"), ctx)
    assert "the harness added the missing import(s): import math" in seen.text
    assert (tmp_path / "main.py").read_text() == "import math\nimport sys\nprint(math.sqrt(4))\n"
    bad = write.run  # an undefined name with no home is still refused
    import pytest

    from pyharness.errors import ActionError

    with pytest.raises(ActionError, match="undefined name 'frobnicate'"):
        bad(write.args(path="other.py", content="frobnicate(sys.argv)\n"), ctx)
