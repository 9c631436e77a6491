"""Every git call ph makes, through GitPython, with every command a repo's config can name switched off.

A repo's `.git/config` (and whatever it includes) can name programs git runs on its behalf: `core.fsmonitor`, hooks,
pagers, GPG, an editor or askpass, an ssh command, external diff and textconv drivers, and filter drivers
(`filter.<name>.clean/smudge/process`, which `git add` and `git status` run on file contents). ph reads trees it did
not write, so its own git calls override all of those on the command line (`git -c`, which beats any config file,
included ones too): the fixed settings in SAFE_CONFIG, and for every driver name the repo's config (or an included
file) defines, its commands set to nothing (`_driver_overrides`). The system config is never read, and nothing is
paged. The work tree is never taken from the repo's own `core.worktree` either (it would move ph's root to a folder
the repo picks, docs/safety-cases.md case 70): every call names it in `GIT_WORK_TREE`, the folder that holds the `.git`
entry. Inside the sandbox `.git` itself is read-only (`sandbox._protected_in`), so code that runs there cannot plant
any of this for the user's own next `git status` either (case 77).
"""

import os
import stat
from pathlib import Path

import git

SAFE_CONFIG = {
    "core.fsmonitor": "false",
    "core.hooksPath": os.devnull,
    "core.pager": "cat",
    "core.editor": ":",
    "core.askPass": "",
    "core.sshCommand": "",
    "core.alternateRefsCommand": "",
    "credential.helper": "",
    "commit.gpgsign": "false",
    "tag.gpgsign": "false",
    "gpg.program": "",
    "gpg.ssh.program": "",
    "gpg.x509.program": "",
    "core.untrackedCache": "false",
    "diff.external": "",
    "protocol.allow": "never",
    "submodule.recurse": "false",
    "status.submoduleSummary": "false",
    "diff.ignoreSubmodules": "all",
    "gc.auto": "0",
    "maintenance.auto": "false",
}
DRIVER_COMMANDS = {"filter": ("clean", "smudge", "process"), "diff": ("textconv", "command"), "merge": ("driver",),
                   "hook": ("command",)}
"""Config sections whose named subsections hold commands git runs (`filter.<name>.clean`, ...): each set to ''."""
SAFE_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_ATTR_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat",
            "GIT_EXTERNAL_DIFF": "", "GIT_OPTIONAL_LOCKS": "0", "GIT_EDITOR": ":", "GIT_SEQUENCE_EDITOR": ":",
            "GIT_ASKPASS": "", "SSH_ASKPASS": ""}
AUTHOR = {"GIT_AUTHOR_NAME": "ph", "GIT_AUTHOR_EMAIL": "ph@localhost", "GIT_COMMITTER_NAME": "ph",
          "GIT_COMMITTER_EMAIL": "ph@localhost"}


class GitError(Exception):
    """A git call failed (or git is missing)."""


def run(root: Path, *args: str, timeout: float = 30.0) -> str:
    """Run `git ARGS` in root with ph's safe settings; returns stdout or raises GitError."""
    return _execute(root, [*_config_args(SAFE_CONFIG), *_config_args(_driver_overrides(root, timeout))], args,
                    timeout)


def _config_args(settings: dict[str, str]) -> list[str]:
    return [arg for key, value in settings.items() for arg in ("-c", f"{key}={value}")]


def _driver_overrides(root: Path, timeout: float) -> dict[str, str]:
    """`-c` settings that empty the command of every filter, diff, merge and hook driver the config defines (in
    the repo's config, the user's, or a file either includes); a filter is no longer `required` either."""
    pattern = "^(" + "|".join(DRIVER_COMMANDS) + r")\..+\."
    try:
        out = _execute(root, _config_args(SAFE_CONFIG), ["config", "--name-only", "--get-regexp", pattern], timeout)
    except GitError:  # exit 1: none defined (or not a repo)
        return {}
    found: dict[str, str] = {}
    for key in out.splitlines():
        section, _, rest = key.partition(".")
        name = rest.rpartition(".")[0]
        if section.lower() not in DRIVER_COMMANDS or not name:
            continue
        for command in DRIVER_COMMANDS[section.lower()]:
            found[f"{section}.{name}.{command}"] = ""
        if section.lower() == "filter":
            found[f"{section}.{name}.required"] = "false"
    return found


def _execute(root: Path, config: list[str], args: tuple[str, ...] | list[str], timeout: float) -> str:
    command = ["git", "--no-pager", *config, *args]
    top = work_tree(root)
    pinned = {"GIT_WORK_TREE": str(top)} if top is not None else {}
    try:
        return git.Git(str(root)).execute(command, env={**SAFE_ENV, **AUTHOR, **pinned}, kill_after_timeout=timeout,
                                          strip_newline_in_stdout=False, stdout_as_string=True)
    except (git.GitCommandError, git.GitCommandNotFound, OSError) as exc:
        raise GitError(str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__) from exc


def listed_files(root: Path) -> list[str] | None:
    """Tracked plus untracked, not ignored files (repo-relative), or None when root is not inside a git work tree."""
    try:
        out = run(root, "ls-files", "-z", "-co", "--exclude-standard", timeout=20)
    except GitError:
        return None
    return [name for name in out.split("\0") if name]


def toplevel(path: Path) -> Path | None:
    """The top of the git work tree that holds path, or None when path is not inside one (or git is missing)."""
    top = work_tree(path)
    if top is None:
        return None
    try:
        run(top, "rev-parse", "--git-dir", timeout=10)
    except GitError:
        return None
    return top


def head(root: Path) -> str | None:
    """The commit checked out in the repo that holds root, or None (no repo, no commit yet, git missing)."""
    try:
        return run(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", timeout=10).strip() or None
    except GitError:
        return None


def work_tree(path: Path) -> Path | None:
    """The nearest folder from `path` up that holds a `.git` entry (directory, or file for worktrees), found on the
    filesystem rather than asked of git, which would follow the repo's own `core.worktree`."""
    path = Path(path).absolute()
    for folder in [path, *path.parents]:
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def ignored(root: Path, rels: list[str]) -> set[str]:
    """Which of these repo-relative paths git ignores (empty when root is not a git repo)."""
    if not rels:
        return set()
    try:
        out = run(root, "check-ignore", "--no-index", "--", *rels, timeout=20)
    except GitError:  # exit 1 means "none ignored"; not a repo also lands here
        return set()
    return {name for name in out.splitlines() if name}


def snapshot_repo(root: Path, message: str) -> None:
    """Make root a new git repo holding one commit of everything in it: no template hooks, no hooks, no signing,
    author and committer `ph <ph@localhost>` (for the demo's and evals' own repos, never the user's)."""
    run(root, "init", "-q", "--template=")
    run(root, "add", "-A")
    run(root, "commit", "-q", "--no-verify", "--no-gpg-sign", "-m", message)


def exclude(root: Path, pattern: str) -> bool:
    """Add pattern to the repo's `.git/info/exclude` (once); False when root is not in a plain git work tree.

    Only a real `.git` directory at the top of the work tree is touched, never through a symlink (a repo's
    `.git/info/exclude` may be a link to a file elsewhere); worktrees and submodules (`.git` is a file) are skipped.
    """
    try:
        top = Path(run(root, "rev-parse", "--show-toplevel", timeout=10).strip())
    except GitError:
        return False
    info = top / ".git" / "info"
    if not _real_dir(top / ".git") or (os.path.lexists(info) and not _real_dir(info)):
        return False
    info.mkdir(exist_ok=True)
    target = info / "exclude"
    try:
        fd = os.open(target, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError:
        return False
    with os.fdopen(fd, "r+b") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return False
        text = f.read().decode("utf-8", "replace")
        if pattern not in text.splitlines():
            f.write(("" if not text or text.endswith("\n") else "\n").encode() + pattern.encode() + b"\n")
    return True


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
