"""Second list, case 70: a repo's `.git/config` `core.worktree` does not move ph's root to another folder."""

import subprocess

import pytest

from pyharness.workspace.gitops import listed_files, toplevel


@pytest.mark.case(70)
def test_core_worktree_in_the_repos_config_does_not_move_the_root(tree):
    tree.write("a.py", "x = 1\n")
    tree.outside_file("elsewhere.py", "y = 2\n")
    tree.git_init()
    subprocess.run(["git", "config", "core.worktree", str(tree.outside)], cwd=tree.repo, check=True, timeout=30)
    (tree.repo / "sub").mkdir()
    assert toplevel(tree.repo / "sub") == tree.repo
    assert toplevel(tree.repo) == tree.repo
    listed = listed_files(tree.repo)
    assert listed is not None and "a.py" in listed
    assert "elsewhere.py" not in listed
