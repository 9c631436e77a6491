import pytest

from library.catalog import Book


def test_catalog_counts_its_books(catalog):
    assert len(catalog) == 5


def test_duplicate_isbn_is_rejected(catalog):
    with pytest.raises(ValueError):
        catalog.add(Book("978-0-14-143958-7", "Emma (copy)", "Jane Austen", 1815))


def test_get_by_isbn(catalog):
    assert catalog.get("978-0-14-143960-0").title == "Oliver Twist"


def test_find_by_author_ignores_case_and_sorts_by_year(catalog):
    titles = [book.title for book in catalog.find_by_author("jane austen")]
    assert titles == ["Sense and Sensibility", "Pride and Prejudice", "Emma"]


def test_find_by_unknown_author_is_empty(catalog):
    assert catalog.find_by_author("Mark Twain") == []


def test_published_between_includes_both_years(catalog):
    titles = [book.title for book in catalog.published_between(1811, 1815)]
    assert titles == ["Emma", "Pride and Prejudice", "Sense and Sensibility"]
