import pytest

from ledger.account import Account, InsufficientFundsError


def test_new_account_is_empty():
    account = Account("ana")
    assert account.balance() == 0
    assert account.transactions == []


def test_opening_balance_is_a_deposit():
    account = Account("ana", 50.0)
    assert account.balance() == 50.0
    assert account.transactions[0].kind == "deposit"
    assert account.transactions[0].note == "opening balance"


def test_deposit_and_withdraw():
    account = Account("ana")
    account.deposit(100.0)
    account.withdraw(30.5)
    assert account.balance() == 69.5


def test_overdraft_is_refused():
    account = Account("ana", 10.0)
    with pytest.raises(InsufficientFundsError):
        account.withdraw(10.01)
    assert account.balance() == 10.0


def test_non_positive_amounts_are_rejected():
    account = Account("ana", 10.0)
    with pytest.raises(ValueError):
        account.deposit(0)
    with pytest.raises(ValueError):
        account.withdraw(-5)
