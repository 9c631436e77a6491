"""Split an RPN expression such as "3 4 + 2 *" into numbers and operators."""

OPERATORS = {"+", "-", "*", "/"}


class RPNError(Exception):
    """The expression cannot be evaluated."""


def tokenize(expression: str) -> list[float | str]:
    """Whitespace-separated tokens: operators stay strings, everything else must be a number (a float)."""
    tokens: list[float | str] = []
    for word in expression.split():
        if word in OPERATORS:
            tokens.append(word)
            continue
        try:
            tokens.append(float(word))
        except ValueError:
            raise RPNError(f"not a number or operator: {word!r}") from None
    return tokens
