"""Evaluate RPN expressions with a stack: numbers are pushed, an operator pops two and pushes the result."""

from rpncalc.tokens import RPNError, tokenize


def apply(operator: str, left: float, right: float) -> float:
    """`left <operator> right`; division by zero is an RPNError."""
    if operator == "+":
        return left + right
    if operator == "-":
        return left - right
    if operator == "*":
        return left * right
    if right == 0:
        raise RPNError("division by zero")
    return left / right


def evaluate(expression: str) -> float:
    """The value of the expression, e.g. evaluate("3 4 + 2 *") == 14.0.

    For "a b -" the result is a - b: the number pushed first is the left operand.
    """
    stack: list[float] = []
    for token in tokenize(expression):
        if isinstance(token, float):
            stack.append(token)
            continue
        if len(stack) < 2:
            raise RPNError(f"operator {token!r} needs two numbers")
        right = stack.pop()
        left = stack.pop()
        stack.append(apply(token, left, right))
    if len(stack) != 1:
        raise RPNError(f"expression leaves {len(stack)} values on the stack")
    return stack[0]
