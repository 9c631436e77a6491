"""A bank account that records every deposit and withdrawal."""

from dataclasses import dataclass


class InsufficientFundsError(Exception):
    """A withdrawal asked for more than the balance."""


@dataclass(frozen=True)
class Transaction:
    """One movement of money. `kind` is "deposit" or "withdrawal"; `amount` is always positive."""

    kind: str
    amount: float
    note: str = ""


class Account:
    """An account with an owner, a balance and the list of its transactions (oldest first)."""

    def __init__(self, owner: str, opening_balance: float = 0.0):
        self.owner = owner
        self.transactions: list[Transaction] = []
        if opening_balance:
            self.deposit(opening_balance, note="opening balance")

    def deposit(self, amount: float, note: str = "") -> None:
        """Add `amount` (must be positive) to the account."""
        if amount <= 0:
            raise ValueError(f"deposit must be positive, got {amount}")
        self.transactions.append(Transaction("deposit", amount, note))

    def withdraw(self, amount: float, note: str = "") -> None:
        """Take `amount` (must be positive) out; raises InsufficientFundsError when the balance is short."""
        if amount <= 0:
            raise ValueError(f"withdrawal must be positive, got {amount}")
        if amount > self.balance():
            raise InsufficientFundsError(f"{self.owner}: balance {self.balance():.2f} < {amount:.2f}")
        self.transactions.append(Transaction("withdrawal", amount, note))

    def balance(self) -> float:
        """Deposits minus withdrawals, rounded to cents."""
        total = 0.0
        for tx in self.transactions:
            total += tx.amount if tx.kind == "deposit" else -tx.amount
        return round(total, 2)
