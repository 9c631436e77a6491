"""Small text helpers: URL slugs (textkit/slug.py) and word-safe truncation (textkit/shorten.py)."""

from textkit.shorten import shorten
from textkit.slug import slugify, unique_slug

__all__ = ["shorten", "slugify", "unique_slug"]
