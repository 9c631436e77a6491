"""write: create a file with the given content (an existing file only if it is short; otherwise use edit)."""

import ast

from pydantic import BaseModel, Field

from pyharness.actions.base import Action, Context, Observation
from pyharness.errors import ActionError
from pyharness.harness.codemerge import merge_definitions


class Args(BaseModel):
    path: str = Field(description="file to create, relative to the repo root")
    content: str = Field(description="the whole file (sent in a code block after the Action line)")


def run(args: Args, ctx: Context) -> Observation:
    ws = ctx.workspace
    target = ws.resolve(args.path, write=True)
    old = target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None
    limit = ws.limit.max_overwrite_lines
    if old is not None and old.count("\n") > limit:
        raise ActionError(f"write refused: {args.path} exists and is {old.count(chr(10))} lines (over {limit}); "
                          "use edit to change part of it")
    if old is not None and old.rstrip("\n") == args.content.rstrip("\n"):
        failing = ctx.last_test.error_line() if ctx.last_test is not None else ""
        raise ActionError(
            f"write {args.path}: the file already holds exactly this content, so nothing changed"
            + (f"; with it the tests fail: {failing}" if failing else "")
            + ". Send a corrected version that changes the code that fails."
        )
    added: list[str] = []
    if ctx.lint:
        from pyharness.harness.imports import add_imports, stdlib_imports
        from pyharness.harness.lint import check_change, empty_functions, lazy_placeholder

        lazy = lazy_placeholder(args.content)
        if lazy:
            raise ActionError(f"write {args.path} refused: the content has a placeholder ({lazy.strip()!r}); "
                              "send the complete file")
        empty = [name for name in empty_functions(args.content) if name not in empty_functions(old or "")]
        if empty and args.path.endswith(".py"):
            raise ActionError(f"write {args.path} refused: {', '.join(empty)} has no body, only a docstring; "
                              "send the function with its code")
        problem = check_change(args.path, old, args.content)
        if problem and ws.is_test_path(ws.rel(target)):
            fixed = add_imports(args.content, ws, ctx.task)
            if fixed and check_change(args.path, old, fixed[0]) is None:
                args, added, problem = Args(path=args.path, content=fixed[0]), fixed[1], None
        if problem:
            fixed = stdlib_imports(args.content)
            if fixed and check_change(args.path, old, fixed[0]) is None:
                args, added, problem = Args(path=args.path, content=fixed[0]), fixed[1], None
        if problem:
            raise ActionError(f"write {args.path} refused, the content does not parse:\n{problem}")
        lost = lost_definitions(args.path, old, args.content) if ctx.keep_definitions else []
        if lost:
            merged = merge_definitions(old, args.content)
            if merged is None:
                raise ActionError(f"write {args.path} refused: it would delete {', '.join(lost)}; use edit to "
                                  "change part of the file")
            rel, _ = ws.write_text(args.path, merged[0])
            return Observation(f"Edited {rel}: replaced {', '.join(merged[1])} (the rest of the file kept).",
                               data={"changed": rel})
    rel, _ = ws.write_text(args.path, args.content)
    verb = "Rewrote" if old is not None else "Created"
    note = f" The harness added the missing import(s): {'; '.join(added)}." if added else ""
    return Observation(f"{verb} {rel} ({args.content.count(chr(10)) + 1} lines).{note}", data={"changed": rel})


def lost_definitions(path: str, old: str | None, new: str) -> list[str]:
    """Top-level functions and classes an overwrite of a Python file would remove."""
    if old is None or not path.endswith(".py"):
        return []

    def names(source: str) -> list[str]:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return []
        return [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]

    kept = set(names(new))
    return [name for name in names(old) if name not in kept]


ACTION = Action(
    name="write", args=Args, run=run, description=__doc__.strip(), body_arg="content",
    example=('Action: write {"path": "shop/report.py"}\n```python\ndef format_total(total: float) -> str:\n'
             '    return f"Total: {total:.2f}"\n```'),
    aliases=("write_file", "create", "create_file", "save", "save_file", "new_file", "overwrite", "writefile"))
