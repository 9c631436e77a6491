"""The safety tree's own checks can fail: an outside write and an outside read are each seen."""

from safetree import _changed_bytes, _snapshot


def test_snapshot_sees_an_outside_change(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    before = _snapshot(tmp_path)
    (tmp_path / "a.txt").write_text("two!\n")
    (tmp_path / "b").symlink_to("a.txt")
    assert _changed_bytes(before, _snapshot(tmp_path)) > 0


def test_canary_is_unique_per_outside_file(tree):
    tree.outside_file("b.txt")
    assert len(set(tree.canaries)) == 2
    b_canary = next(c for c, rel in tree.canaries.items() if rel == "b.txt")
    assert b_canary not in (tree.outside / "secret.txt").read_text()
