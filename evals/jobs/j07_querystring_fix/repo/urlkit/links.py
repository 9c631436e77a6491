"""Add or replace query parameters of a URL."""

from urlkit.query import build_query, parse_query


def with_params(url: str, **params: str) -> str:
    """`url` with the given parameters set (replacing earlier values of the same keys).

    A "#fragment" at the end of the URL is kept at the end.
    """
    url, hash_mark, fragment = url.partition("#")
    base, _, query = url.partition("?")
    merged = parse_query(query)
    for key, value in params.items():
        merged[key] = [value]
    new_query = build_query(merged)
    result = f"{base}?{new_query}" if new_query else base
    return result + hash_mark + fragment
