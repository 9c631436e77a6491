import pytest

from ledger.account import Account, InsufficientFundsError
from ledger.transfer import transfer


def test_transfer_moves_money():
    ana, bob = Account("ana", 100.0), Account("bob")
    transfer(ana, bob, 40.0)
    assert ana.balance() == 60.0
    assert bob.balance() == 40.0


def test_transfer_notes_name_the_other_account():
    ana, bob = Account("ana", 100.0), Account("bob")
    transfer(ana, bob, 40.0)
    assert ana.transactions[-1].note == "transfer to bob"
    assert bob.transactions[-1].note == "transfer from ana"


def test_failed_transfer_changes_nothing():
    ana, bob = Account("ana", 5.0), Account("bob")
    with pytest.raises(InsufficientFundsError):
        transfer(ana, bob, 40.0)
    assert ana.balance() == 5.0
    assert bob.transactions == []
