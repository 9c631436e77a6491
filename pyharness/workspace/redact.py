"""Secrets masked before anything ph records reaches disk: cloud keys, tokens, private keys, URL passwords, and the
value of every environment variable ph scrubs from test runs (whatever its name and shape)."""

import os
import re

SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|AUTH|CREDENTIAL|PRIVATE|CERT"
                         r"|_(?:PASS|PWD|DSN|SESSION)$", re.IGNORECASE)
"""Environment variable names that hold credentials: dropped from every child's environment (`procs.clean_env`),
and their values masked by value in everything ph records. Besides the words, names ending in `_PASS`, `_PWD`,
`_DSN` or `_SESSION` (`DB_PASS`, `MYSQL_PWD`, `SENTRY_DSN`, `BW_SESSION`); `PWD` and `OLDPWD` are not."""
MIN_SECRET_CHARS = 8
"""A scrubbed variable's value shorter than this is not masked by value (`1`, `true` would mask everything)."""

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)", re.DOTALL),
     "[redacted private key]"),
    (re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"), "[redacted AWS key]"),
    (re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}"),
     "[redacted GitHub token]"),
    (re.compile(r"\b(?:sk|xox[abprs])-[A-Za-z0-9-]{20,}"), "[redacted token]"),
    (re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"), "[redacted GitLab token]"),
    (re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"), "[redacted Stripe key]"),
    # a DSN whose key is its user part (Sentry's https://KEY@o1.ingest.sentry.io/2): the key goes
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://)[0-9a-f]{32}@"), r"\1[redacted]@"),
    # scheme://user:password@host: the user stays (it helps to read the log), the password goes
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\"<>]+:)[^\s/@'\"<>]+@"), r"\1[redacted]@"),
    # an AWS secret key has no shape of its own (40 base64 characters): it is known by its name, in any format
    (re.compile(r"(?i)\b(aws_?secret_?(?:access_?)?key['\"]?\s*[=:]\s*['\"]?)[A-Za-z0-9/+=]{16,}"), r"\1[redacted]"),
    # password-like names given a quoted literal (`password = "..."`) or, env-style, a bare value (`PASSWORD=...`);
    # code such as `password = request.form["password"]` is left as it is
    (re.compile(r"(?i)\b((?:db_?|my_?)?(?:password|passwd|pwd|api_?key|auth_?token|secret))(['\"]?\s*[=:]\s*)(['\"])"
                r"[^'\"\s]{6,}\3"), r"\1\2\3[redacted]\3"),
    (re.compile(r"(?i)^(\s*(?:export\s+)?[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|API_?KEY|TOKEN|_PASS|_PWD|_DSN|_SESSION)=)"
                r"[^\s'\"]{6,}",
                re.MULTILINE), r"\1[redacted]"),
)


def redact(text: str) -> str:
    """The text with every secret-looking value replaced by a [redacted ...] marker."""
    for value in _scrubbed_values():
        text = text.replace(value, "[redacted]")
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


def _scrubbed_values() -> list[str]:
    """The values of this process's credential-named variables (the ones `procs.clean_env` keeps from tests),
    longest first so a value containing another is masked whole."""
    values = {v for k, v in os.environ.items() if SECRET_NAME.search(k) and len(v) >= MIN_SECRET_CHARS}
    return sorted(values, key=len, reverse=True)


def redact_data(value):
    """A JSON-like value (dicts, lists, strings) with every string redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(str(k)): redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value
