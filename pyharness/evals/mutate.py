"""Single-site mutations of Python source, for fix jobs seeded into real code (`ph eval mutants`).

libcst does the syntax work, so a mutation changes one operator or constant and keeps every other byte of the
file (comments, spacing). Sites are numbered in the order libcst visits them, which is fixed for a given source:
(source, site index) names one mutant exactly.
"""

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

FLIPS: dict[type, type] = {
    cst.LessThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.LessThan,
    cst.GreaterThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.GreaterThan,
    cst.Equal: cst.NotEqual,
    cst.NotEqual: cst.Equal,
    cst.Is: cst.IsNot,
    cst.IsNot: cst.Is,
    cst.In: cst.NotIn,
    cst.NotIn: cst.In,
}
ARITHMETIC: dict[type, type] = {
    cst.Add: cst.Subtract,
    cst.Subtract: cst.Add,
    cst.Multiply: cst.FloorDivide,
    cst.FloorDivide: cst.Multiply,
    cst.Divide: cst.Multiply,
    cst.Modulo: cst.FloorDivide,
}
BOOLEAN: dict[type, type] = {cst.And: cst.Or, cst.Or: cst.And}
DROPPABLE_CALLS = {"strip", "lstrip", "rstrip", "lower", "upper", "casefold", "copy"}
OPERATORS = ("comparison", "arithmetic", "boolean", "negation", "constant", "off-by-one", "dropped-call")


@dataclass(frozen=True)
class Site:
    """One place a mutation can go."""

    index: int
    line: int
    operator: str
    """One of OPERATORS."""
    description: str
    """What changes, e.g. '< -> <=' or '3 -> 4'."""


def _swap_operator(op: cst.CSTNode, table: dict[type, type]) -> cst.CSTNode | None:
    new = table.get(type(op))
    if new is None:
        return None
    return new(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)


def _token(op: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(op).strip()


class _Mutator(cst.CSTTransformer):
    """Numbers every mutable site in visit order; replaces the one numbered `target` (None: only count)."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, target: int | None = None):
        super().__init__()
        self.target = target
        self.sites: list[Site] = []
        self.skip_depth = 0

    def _offer(self, original: cst.CSTNode, operator: str, description: str, replacement: cst.CSTNode):
        """Count a site; return the replacement when it is the target, else None."""
        if self.skip_depth:
            return None
        index = len(self.sites)
        line = self.get_metadata(PositionProvider, original).start.line
        self.sites.append(Site(index, line, operator, description))
        return replacement if index == self.target else None

    # annotations, decorators and docstrings are not code a test exercises
    def visit_Annotation(self, node):
        self.skip_depth += 1

    def leave_Annotation(self, original_node, updated_node):
        self.skip_depth -= 1
        return updated_node

    def visit_Decorator(self, node):
        self.skip_depth += 1

    def leave_Decorator(self, original_node, updated_node):
        self.skip_depth -= 1
        return updated_node

    def leave_ComparisonTarget(self, original_node, updated_node):
        new_op = _swap_operator(updated_node.operator, FLIPS)
        if new_op is None:
            return updated_node
        hit = self._offer(original_node, "comparison",
                          f"{_token(updated_node.operator)} -> {_token(new_op)}",
                          updated_node.with_changes(operator=new_op))
        return hit or updated_node

    def leave_BinaryOperation(self, original_node, updated_node):
        new_op = _swap_operator(updated_node.operator, ARITHMETIC)
        strings = cst.SimpleString | cst.ConcatenatedString | cst.FormattedString
        if new_op is None or isinstance(updated_node.left, strings):
            return updated_node  # '%' formatting and string '+' are not arithmetic
        hit = self._offer(original_node, "arithmetic", f"{_token(updated_node.operator)} -> {_token(new_op)}",
                          updated_node.with_changes(operator=new_op))
        return hit or updated_node

    def leave_BooleanOperation(self, original_node, updated_node):
        new_op = _swap_operator(updated_node.operator, BOOLEAN)
        if new_op is None:
            return updated_node
        hit = self._offer(original_node, "boolean", f"{_token(updated_node.operator)} -> {_token(new_op)}",
                          updated_node.with_changes(operator=new_op))
        return hit or updated_node

    def leave_UnaryOperation(self, original_node, updated_node):
        if not isinstance(updated_node.operator, cst.Not):
            return updated_node
        hit = self._offer(original_node, "negation", "not x -> x", updated_node.expression)
        return hit or updated_node

    def leave_Integer(self, original_node, updated_node):
        text = updated_node.value
        if not text.isdigit() or len(text) > 4:
            return updated_node
        new = str(int(text) + 1)
        hit = self._offer(original_node, "constant", f"{text} -> {new}", updated_node.with_changes(value=new))
        return hit or updated_node

    def leave_Name(self, original_node, updated_node):
        if updated_node.value not in ("True", "False"):
            return updated_node
        new = "False" if updated_node.value == "True" else "True"
        hit = self._offer(original_node, "constant", f"{updated_node.value} -> {new}",
                          updated_node.with_changes(value=new))
        return hit or updated_node

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        if isinstance(func, cst.Attribute) and func.attr.value in DROPPABLE_CALLS and not updated_node.args:
            hit = self._offer(original_node, "dropped-call", f".{func.attr.value}() dropped", func.value)
            return hit or updated_node
        if isinstance(func, cst.Name) and func.value == "range" and updated_node.args:
            stop_at = 0 if len(updated_node.args) == 1 else 1
            stop = updated_node.args[stop_at]
            if stop.keyword is not None or stop.star or isinstance(stop.value, cst.Integer):
                return updated_node  # a literal stop is already a constant site
            bumped = cst.BinaryOperation(stop.value, cst.Add(), cst.Integer("1"))
            args = list(updated_node.args)
            args[stop_at] = stop.with_changes(value=bumped)
            hit = self._offer(original_node, "off-by-one", "range stop + 1", updated_node.with_changes(args=args))
            return hit or updated_node
        return updated_node


def sites(source: str) -> list[Site]:
    """Every mutation site of a module's source, in a fixed order (SyntaxError-free source only)."""
    mutator = _Mutator()
    MetadataWrapper(cst.parse_module(source)).visit(mutator)
    return mutator.sites


def mutate(source: str, index: int) -> str:
    """The source with site `index` mutated; ValueError when there is no such site or nothing changed."""
    mutator = _Mutator(target=index)
    new = MetadataWrapper(cst.parse_module(source)).visit(mutator).code
    if index >= len(mutator.sites) or new == source:
        raise ValueError(f"no mutation site {index} (the source has {len(mutator.sites)})")
    return new
