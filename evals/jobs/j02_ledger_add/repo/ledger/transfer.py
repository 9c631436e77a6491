"""Move money between two accounts."""

from ledger.account import Account


def transfer(source: Account, target: Account, amount: float) -> None:
    """Withdraw `amount` from `source` and deposit it into `target`.

    The withdrawal happens first, so a failed withdrawal leaves both accounts unchanged.
    """
    source.withdraw(amount, note=f"transfer to {target.owner}")
    target.deposit(amount, note=f"transfer from {source.owner}")
