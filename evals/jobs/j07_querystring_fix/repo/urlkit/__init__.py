"""Query strings (urlkit/query.py) and adding parameters to URLs (urlkit/links.py)."""
