"""Never leave the tree worse (pyharness/workspace/keepbest.py): a fix run that stops with more judging tests failing
than it started with gets the best state it saw put back, and says so; a run that ends no worse is left as it is."""

import subprocess

from pyharness.runstate import Outcome
from pyharness.workspace.undo import undo_last

BREAK_COUPON = ('Action: edit {"path": "orders/pricing.py"}\n<<<<<<< SEARCH\n'
                "    return round(amount * (1 - percent / 100), 2)\n=======\n"
                "    return round(amount * (1 + percent / 100), 2)\n>>>>>>> REPLACE")
FIX_BULK = ('Action: edit {"path": "orders/pricing.py"}\n<<<<<<< SEARCH\n    if line.quantity > BULK_THRESHOLD:\n'
            "=======\n    if line.quantity >= BULK_THRESHOLD:\n>>>>>>> REPLACE")


def failing(repo) -> int:
    run = subprocess.run(["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo, capture_output=True,
                         text=True)
    return sum(1 for line in run.stdout.splitlines() if line.startswith("FAILED "))


def test_a_last_edit_that_breaks_more_tests_is_rolled_back_at_the_budget(orders, drive):
    """The stats-style case: the run's one edit makes a passing test fail beside the one that failed; the step budget
    ends the run, and the file goes back to what it was, the summary saying so."""
    repo = orders("fix")
    pricing = (repo / "orders" / "pricing.py").read_text()
    before = failing(repo)
    result, records = drive(repo, "fix", "", [BREAK_COUPON], max_steps=1)
    assert result.outcome is Outcome.STOPPED and result.reason.startswith("step budget of 1 used up; ")
    assert f"where {before} failed at the start: put back the files as they were in orders/pricing.py" \
        in result.reason, result.reason
    assert result.put_back and result.interventions.get("keepbest.put_back") == 1
    assert result.changed == []  # the file is as the run found it
    assert (repo / "orders" / "pricing.py").read_text() == pricing and failing(repo) == before
    assert [r["event"] for r in records][-2:] == ["put_back", "end"]
    assert undo_last(repo) == ["restored orders/pricing.py"]  # undo still holds: the file as the run found it
    assert (repo / "orders" / "pricing.py").read_text() == pricing


def test_the_best_state_seen_comes_back_not_the_original(orders, drive):
    """Two bugs: the first edit fixes one (fewer failing), the second breaks a third function (more failing than at
    the start): the tree goes back to the state after the first edit."""
    repo = orders("fix")
    tax = repo / "orders" / "tax.py"
    tax.write_text(tax.read_text().replace('"books": 0.05', '"books": 0.06'))
    subprocess.run(["git", "commit", "-qam", "a second bug"], cwd=repo, check=True)
    start = failing(repo)
    result, _ = drive(repo, "fix", "", [FIX_BULK, BREAK_COUPON], max_steps=2)
    assert "put back the best state seen (step 1: " in result.reason, result.reason
    text = (repo / "orders" / "pricing.py").read_text()
    assert ">= BULK_THRESHOLD" in text and "1 - percent / 100" in text
    assert 0 < failing(repo) < start


def test_a_run_that_ends_no_worse_is_left_as_it_is(orders, drive):
    repo = orders("fix")
    harmless = ('Action: edit {"path": "orders/pricing.py"}\n<<<<<<< SEARCH\n"""Order subtotal and discounts."""\n'
                '=======\n"""Order subtotals and discounts."""\n>>>>>>> REPLACE')
    result, records = drive(repo, "fix", "", [harmless], max_steps=1)
    assert result.outcome is Outcome.STOPPED and result.reason == "step budget of 1 used up" and not result.put_back
    assert "subtotals" in (repo / "orders" / "pricing.py").read_text()
    assert "put_back" not in [r["event"] for r in records]
