import pytest

from library.catalog import Book, Catalog


@pytest.fixture
def catalog() -> Catalog:
    return Catalog([
        Book("978-0-14-143951-8", "Pride and Prejudice", "Jane Austen", 1813),
        Book("978-0-14-143958-7", "Emma", "Jane Austen", 1815),
        Book("978-0-14-062010-8", "Sense and Sensibility", "Jane Austen", 1811),
        Book("978-0-14-143947-1", "Great Expectations", "Charles Dickens", 1861),
        Book("978-0-14-143960-0", "Oliver Twist", "Charles Dickens", 1838),
    ])
