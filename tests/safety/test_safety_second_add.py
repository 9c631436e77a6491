"""Second list, case 74: an example in `ph add`'s task text becomes a test only when its arguments are data."""

import pytest

from pyharness.trials.candidates import AddTarget
from pyharness.workspace.tree import Workspace


@pytest.mark.case(74)
def test_an_example_whose_argument_runs_code_is_not_made_a_test(tree):
    tree.write("shop/__init__.py", "")
    tree.write("shop/items.py", "class Item:\n    def __init__(self, name, price):\n        self.name, self.price = "
                                "name, price\n")
    canary = tree.outside / "ran.txt"
    task = ("Add a function total(items) in the new file shop/total.py that sums the prices (see shop/items.py). "
            f"Examples: total([]) == 0, total([Item('a', 2.5), Item('b', 1.5)]) == 4.0, "
            f"total(__import__('os').system('touch {canary}')) == 0, "
            "total(().__class__.__base__.__subclasses__()) == 0, total(Item.__init__.__globals__) == 0.")
    target = AddTarget.parse(Workspace(tree.repo), task)
    assert target is not None
    calls = [c.call for c in target.checks]
    assert calls == ["total([])", "total([Item('a', 2.5), Item('b', 1.5)])"]
    assert "system" not in target.test and "__class__" not in target.test and "__globals__" not in target.test
    assert "from shop.items import Item" in target.test
    assert not canary.exists()
