"""Acceptance test for j02_ledger_add (copied into tests/ only at check time)."""

from ledger.account import Account


def _summarize():
    from ledger.summary import summarize

    return summarize


def test_summary_of_a_new_account_is_all_zero():
    summarize = _summarize()
    assert summarize(Account("ana")) == {"deposits": 0.0, "withdrawals": 0.0, "balance": 0.0, "count": 0}


def test_summary_totals_deposits_and_withdrawals():
    summarize = _summarize()
    account = Account("ana", 100.0)
    account.withdraw(30.0)
    account.deposit(12.5)
    account.withdraw(2.25)
    assert summarize(account) == {"deposits": 112.5, "withdrawals": 32.25, "balance": 80.25, "count": 4}


def test_summary_does_not_change_the_account():
    summarize = _summarize()
    account = Account("ana", 20.0)
    summarize(account)
    assert account.balance() == 20.0
    assert len(account.transactions) == 1
