"""A small library: the book catalog (library/catalog.py) and loans (library/loans.py)."""
