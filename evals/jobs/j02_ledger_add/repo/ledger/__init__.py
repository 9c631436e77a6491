"""A tiny bank-account ledger: accounts (ledger/account.py) and transfers (ledger/transfer.py)."""

from ledger.account import Account, InsufficientFundsError, Transaction
from ledger.transfer import transfer

__all__ = ["Account", "InsufficientFundsError", "Transaction", "transfer"]
