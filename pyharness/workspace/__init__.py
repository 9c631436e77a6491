"""workspace: the repo the model works in and everything that touches it. The tree (`tree.Workspace`: path policy,
write limit, atomic writes), the one path resolver, ignore rules, protected test files, undo, git, the per-repo lock,
secret redaction, and running repository code: the sandbox, process trees, pytest runs reduced to counts and one
traceback, with tool noise quieted at the source (`noise`: every tool run applies it, always; it is no switchable
harness layer).

May import models (nothing does today) and `pyharness.errors`; never the harness, actions or anything above.
"""
