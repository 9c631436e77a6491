"""Secrets masked before anything ph records reaches disk: cloud keys, tokens, private keys, URL passwords."""

import re

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)", re.DOTALL),
     "[redacted private key]"),
    (re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"), "[redacted AWS key]"),
    (re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}"),
     "[redacted GitHub token]"),
    (re.compile(r"\b(?:sk|xox[abprs])-[A-Za-z0-9-]{20,}"), "[redacted token]"),
    # scheme://user:password@host: the user stays (it helps to read the log), the password goes
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\"<>]+:)[^\s/@'\"<>]+@"), r"\1[redacted]@"),
)


def redact(text: str) -> str:
    """The text with every secret-looking value replaced by a [redacted ...] marker."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


def redact_data(value):
    """A JSON-like value (dicts, lists, strings) with every string redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(str(k)): redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value
