"""Turn titles into URL slugs such as "hello-world"."""

import re
import unicodedata

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def slugify(text: str, sep: str = "-", max_length: int = 60) -> str:
    """Lower-case ASCII words of `text` joined by `sep`, at most `max_length` characters.

    Accents are dropped ("Café" -> "cafe"), every run of other characters becomes one `sep`,
    and the slug never starts or ends with `sep`.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_ALNUM.sub(sep, ascii_text.lower()).strip(sep)
    if len(slug) > max_length:
        slug = slug[:max_length].rstrip(sep)
    return slug


def unique_slug(text: str, taken: set[str], sep: str = "-") -> str:
    """slugify(text), with "-2", "-3", ... appended until the slug is not in `taken`."""
    base = slugify(text, sep=sep)
    slug = base
    counter = 2
    while slug in taken:
        slug = f"{base}{sep}{counter}"
        counter += 1
    return slug
