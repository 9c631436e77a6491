"""The books a library owns, searchable by author and by year."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Book:
    """One book; `isbn` identifies it."""

    isbn: str
    title: str
    author: str
    year: int


class Catalog:
    """All books of the library, keyed by ISBN."""

    def __init__(self, books: list[Book] | None = None):
        self._books: dict[str, Book] = {}
        for book in books or []:
            self.add(book)

    def add(self, book: Book) -> None:
        """Add a book; adding a second book with the same ISBN is an error."""
        if book.isbn in self._books:
            raise ValueError(f"duplicate ISBN {book.isbn}")
        self._books[book.isbn] = book

    def get(self, isbn: str) -> Book:
        """The book with this ISBN; KeyError when unknown."""
        return self._books[isbn]

    def find_by_author(self, author: str) -> list[Book]:
        """Books whose author matches `author` exactly, ignoring case; oldest first."""
        wanted = author.strip().lower()
        found = [book for book in self._books.values() if book.author.lower() == wanted]
        return sorted(found, key=lambda book: book.year)

    def published_between(self, first_year: int, last_year: int) -> list[Book]:
        """Books published from `first_year` to `last_year`, both included; sorted by title."""
        found = [book for book in self._books.values() if first_year <= book.year <= last_year]
        return sorted(found, key=lambda book: book.title)

    def __len__(self) -> int:
        return len(self._books)
