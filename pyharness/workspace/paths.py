"""The one path resolver: every read, write, search, list and test target goes through `resolve`.

A model-given path is checked as text first (before any filesystem call), then walked one component at a
time from the repo root the way the kernel would: each symlink is expanded (at most `MAX_HOPS` in all, else
"symlink loop"), `..` leaves the directory actually reached, not the lexical parent, and the real path that
comes out must lie inside the root. Nothing is created, opened or followed outside the root: the walk only
lstat()s and readlink()s.

Decisions, written down:
- An absolute path is accepted when it names something inside the repo (it is made relative and walked like
  any other); every other absolute path is refused as outside the repo.
- `~`, `$HOME`/`${X}` and `scheme://` paths are refused (never expanded); `%2e%2e` is never decoded, so it is a
  literal (odd) name inside the repo. A backslash is a literal character of a name, as it is on POSIX.
- A path that leaves the repo and comes back (`../repo/x`) is accepted: only the real result counts.
"""

import fnmatch
import os
import re
import stat
from functools import lru_cache
from pathlib import Path

from pyharness.errors import PolicyError

MAX_PATH_CHARS = 4096
MAX_NAME_CHARS = 255
MAX_HOPS = 40
"""Symlinks one path may expand through (Linux's own limit); more is reported as a loop."""

VERSION_CONTROL = (".git", "git~1", ".hg", ".svn")
PH_STATE = (".ph", ".ph.*", ".phrc")
SECRETS = (".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
           ".netrc", "_netrc", ".pgpass", ".npmrc", ".pypirc", "credentials", "credentials.*", ".ssh", ".aws",
           ".gnupg", ".docker", ".my.cnf", "*.ppk", "*.kdbx", ".git-credentials")
SECRETS_BROAD = ("*credentials*", "id_*")
"""Credential files under any name (`aws-credentials.txt`, `id_work`); Python source (`google_credentials.py`,
`id_map.py`) is code the model may need to fix, so these two do not protect `.py`/`.pyi` files."""
ENVIRONMENT = (".venv",)
RULES = (
    (VERSION_CONTROL, "version control (.git) is protected"),
    (PH_STATE, "ph's own state and config (.ph/) are protected"),
    (SECRETS, "secrets (.env, keys, credentials) are protected"),
    (ENVIRONMENT, "the virtualenv is protected"),
)
LOG_FRAGMENT = re.compile(r"^(?:FAILED|FAIL|ERROR|ERRORS|PASSED|PASS|OK|SKIPPED|XFAIL|XPASS|E)\s+\S|^File \"")
NOT_EXPANDED = re.compile(r"^~|\$\{?[A-Za-z_]|^[A-Za-z][A-Za-z0-9+.-]*://")


def refuse(path: str, rule: str) -> PolicyError:
    """The one shape of a refusal: the path as given, then the rule that blocked it."""
    shown = path if len(path) <= 200 else path[:200] + "..."
    return PolicyError(f"{shown!r} refused: {rule}")


def check_text(path: object) -> str:
    """The path as text, or PolicyError before any filesystem call (empty, control characters, too long, ...)."""
    if not isinstance(path, str) or not path.strip():
        raise PolicyError('path is empty: give a path relative to the repo root, e.g. "orders/core.py"')
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise refuse(path, "the path contains control characters (NUL, newline, tab)")
    if len(path) > MAX_PATH_CHARS:
        raise refuse(path, f"the path is over {MAX_PATH_CHARS} characters")
    text = path.strip()
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise refuse(path, "the path is not valid text (a lone surrogate)") from None
    if any(len(part.encode("utf-8")) > MAX_NAME_CHARS for part in text.split("/")):
        raise refuse(path, f"a path component is over {MAX_NAME_CHARS} bytes")
    if LOG_FRAGMENT.search(text):
        raise refuse(path, "this is a line of test output, not a path; give only the file path, e.g. tests/test_x.py")
    if NOT_EXPANDED.search(text):
        raise refuse(path, "~, $VARIABLES and URLs are not expanded; give a path relative to the repo root")
    if "::" in text:
        raise refuse(path, "a test node id is not a file; give only the file path before '::'")
    return text


def _name(part: str) -> str:
    """A name as a case-insensitive, dot- and space-trimming filesystem could see it (.GIT, '.git.', '.git ')."""
    return part.strip().rstrip(". ").lower() or part


def protected_rule(parts: list[str]) -> str | None:
    """The rule that protects a path with these components (any spelling), or None."""
    for part in parts:
        rule = _name_rule(_name(part))
        if rule:
            return rule
    return None


@lru_cache(maxsize=8192)
def _name_rule(name: str) -> str | None:
    """The rule protecting one (normalised) path component; cached, as a big tree repeats its folder names."""
    for patterns, rule in RULES:
        if any(fnmatch.fnmatchcase(name, pat) for pat in patterns):
            return rule
    if not name.endswith((".py", ".pyi")) and any(fnmatch.fnmatchcase(name, pat) for pat in SECRETS_BROAD):
        return RULES[2][1]
    return None


def inside(root: str, real: str) -> bool:
    """True when `real` is root itself or below it (by components, so /w/proj-evil is not inside /w/proj)."""
    return real == root or real.startswith(root.rstrip("/") + "/")


def resolve(root: Path, path: str, *, aliases: tuple[str, ...] = ()) -> Path:
    """The real absolute path inside `root` that `path` names, or PolicyError (never another exception).

    `root` must be a real (symlink-free) absolute path; `aliases` are other spellings of it (the root as the
    user gave it) that an absolute path may start with.
    """
    text = check_text(path)
    rule = protected_rule(text.split("/"))
    if rule:
        raise refuse(path, rule)
    base = str(root)
    if os.path.isabs(text):
        norm = os.path.normpath(text)
        for prefix in (base, *aliases):
            if inside(prefix, norm):
                text = os.path.relpath(norm, prefix)
                break
        else:
            raise refuse(path, "the path is outside the repo; use a path relative to the repo root")
    real = _walk(base, text, path)
    if not inside(base, real):
        raise refuse(path, "the path leads outside the repo (symlinks and .. are followed to the real path)")
    rel = os.path.relpath(real, base)
    rule = protected_rule(rel.split("/")) if rel != "." else None
    if rule:
        raise refuse(path, f"it leads to {rel}: {rule}")
    return Path(real)


def _walk(base: str, text: str, shown: str) -> str:
    """Follow `text` from `base` component by component, expanding symlinks; returns the real path reached."""
    current, pending, hops, missing = base, [p for p in text.split("/")], 0, 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if missing:
                missing -= 1
            current = os.path.dirname(current) or "/"
            continue
        following = os.path.join(current, part)
        if missing:
            missing += 1
            current = following
            continue
        try:
            info = os.lstat(following)
        except FileNotFoundError:
            missing, current = 1, following
            continue
        except NotADirectoryError:
            raise refuse(shown, f"{os.path.basename(current)} is a file, not a folder") from None
        except OSError as err:
            raise refuse(shown, f"the path cannot be looked up ({err.strerror or type(err).__name__})") from None
        if stat.S_ISLNK(info.st_mode):
            hops += 1
            if hops > MAX_HOPS:
                raise refuse(shown, "symlink loop (the path goes round through symlinks)")
            try:
                target = os.readlink(following)
            except OSError as err:
                raise refuse(shown, f"a symlink cannot be read ({err.strerror})") from None
            if os.path.isabs(target):
                current = "/"
            pending = target.split("/") + pending
            continue
        if not stat.S_ISDIR(info.st_mode) and any(p not in ("", ".") for p in pending):
            raise refuse(shown, f"{part} is a file, not a folder")
        current = following
    return current
