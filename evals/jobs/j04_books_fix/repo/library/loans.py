"""Who has borrowed which book, and until when."""

from datetime import date, timedelta

from library.catalog import Catalog

LOAN_DAYS = 21


class Loans:
    """Open loans of the books in a catalog, one borrower per book."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self._open: dict[str, tuple[str, date]] = {}  # isbn -> (borrower, due date)

    def checkout(self, isbn: str, borrower: str, today: date) -> date:
        """Lend the book to `borrower`; returns the due date, LOAN_DAYS after `today`."""
        self.catalog.get(isbn)  # KeyError for unknown books
        if isbn in self._open:
            raise ValueError(f"{isbn} is already on loan")
        due = today + timedelta(days=LOAN_DAYS)
        self._open[isbn] = (borrower, due)
        return due

    def give_back(self, isbn: str) -> None:
        """The book is returned."""
        if isbn not in self._open:
            raise ValueError(f"{isbn} is not on loan")
        del self._open[isbn]

    def is_available(self, isbn: str) -> bool:
        return isbn not in self._open

    def overdue(self, today: date) -> list[str]:
        """ISBNs of the books whose due date is before `today`, sorted."""
        return sorted(isbn for isbn, (_, due) in self._open.items() if due < today)
