from datetime import date

import pytest

from library.loans import Loans

EMMA = "978-0-14-143958-7"


def test_checkout_returns_due_date_three_weeks_later(catalog):
    loans = Loans(catalog)
    assert loans.checkout(EMMA, "ana", date(2024, 3, 1)) == date(2024, 3, 22)
    assert not loans.is_available(EMMA)


def test_book_on_loan_cannot_be_lent_twice(catalog):
    loans = Loans(catalog)
    loans.checkout(EMMA, "ana", date(2024, 3, 1))
    with pytest.raises(ValueError):
        loans.checkout(EMMA, "bob", date(2024, 3, 2))


def test_give_back_makes_book_available(catalog):
    loans = Loans(catalog)
    loans.checkout(EMMA, "ana", date(2024, 3, 1))
    loans.give_back(EMMA)
    assert loans.is_available(EMMA)


def test_overdue_lists_books_past_their_due_date(catalog):
    loans = Loans(catalog)
    loans.checkout(EMMA, "ana", date(2024, 3, 1))
    assert loans.overdue(date(2024, 3, 22)) == []
    assert loans.overdue(date(2024, 3, 23)) == [EMMA]
