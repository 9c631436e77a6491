"""Date ranges (datespan/span.py) and parsing them from text (datespan/parse.py)."""
