"""Parse a query string such as "q=red+shoes&size=42&size=43" and build one back."""

from urllib.parse import quote_plus, unquote_plus


def parse_query(query: str) -> dict[str, list[str]]:
    """Map each key to the list of its values, in order of appearance.

    A leading "?" is ignored, "+" means a space, %XX escapes are decoded, empty pairs are skipped
    and a key without "=" gets the value "".
    """
    params: dict[str, list[str]] = {}
    for pair in query.removeprefix("?").split("&"):
        if not pair:
            continue
        key, _, value = pair.partition("=")
        params.setdefault(unquote_plus(key), []).append(unquote_plus(value))
    return params


def first_value(query: str, key: str, default: str | None = None) -> str | None:
    """The first value of `key` in the query string, or `default` when the key is absent."""
    values = parse_query(query).get(key)
    return values[0] if values else default


def build_query(params: dict[str, list[str] | str]) -> str:
    """The query string for `params` (without "?"): keys in dict order, spaces as "+"."""
    pairs = []
    for key, values in params.items():
        for value in [values] if isinstance(values, str) else values:
            pairs.append(f"{quote_plus(key)}={quote_plus(value)}")
    return "&".join(pairs)
