"""Shorten text to a width without cutting words in half."""

ELLIPSIS = "..."


def shorten(text: str, width: int) -> str:
    """`text` with runs of whitespace collapsed, cut at a word boundary to fit in `width`
    characters including a trailing "...". Text that already fits is returned unchanged."""
    words = text.split()
    collapsed = " ".join(words)
    if len(collapsed) <= width:
        return collapsed
    kept: list[str] = []
    for word in words:
        candidate = " ".join([*kept, word])
        if len(candidate) + len(ELLIPSIS) > width:
            break
        kept.append(word)
    return " ".join(kept) + ELLIPSIS
