"""Predicates over one record (``where`` and ``allow`` of state checks), compiled for speed.

A check's ``where`` is evaluated on every record a write touches, so its cost is part of
every write step. :func:`record_predicate` compiles an expression once into a function of
the record alone: it is the reference evaluator (:mod:`coworkenv.expr_eval`) with the
context dict gone (the root name *is* the record, every other name is null) and the usual
shapes replaced by direct forms:

- ``r.field`` and ``r.a.b`` read the record's keys directly;
- ``r.field == value`` / ``!=`` / ``<`` … compare against the literal held as a constant;
- ``r.field in [literals]`` tests a tuple made once;
- ``contains(r.field, 'text')`` lower-cases the literal once;
- ``and`` / ``or`` short-circuit without a generator.

Each form uses the reference's own operators (:mod:`coworkenv.expr_ops`), in the same
order, so it gives the same value and fails in the same way; the predicate is
``record_matches``'s verdict: true when the value is truthy, false when evaluation fails
with an :class:`ExprError` (or a value nested too deeply) or the expression is malformed.
Nothing is ever ``eval``-ed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from coworkenv.expr_eval import Compiled, build, evaluate
from coworkenv.expr_ops import COMPARE, ExprError, get_item
from coworkenv.expr_parse import Node, parse

Record = dict[str, Any]
Predicate = Callable[[Record], bool]


def matches_reference(src: str, rec: Any, root: str = "r") -> bool:
    """The verdict the reference evaluator gives: ``src`` on the context ``{root: rec}``, a failure being false."""
    try:
        return bool(evaluate(src, {root: rec}))
    except ExprError:
        return False


@lru_cache(maxsize=4096)
def record_predicate(src: str, root: str = "r") -> Predicate:
    """``src`` as a function of one record: ``matches_reference(src, rec, root)``, faster."""
    try:
        fn = build(parse(src), _Special(root))
    except ExprError:
        return _never

    def holds(rec: Record) -> bool:
        if type(rec) is not dict:  # the direct forms read a dict's keys; anything else as the reference reads it
            return matches_reference(src, rec, root)
        try:
            return bool(fn(rec))
        except (ExprError, RecursionError):
            return False

    return holds


def _never(rec: Record) -> bool:
    return False


class _Special:
    """The direct forms, offered to :func:`build` for every node (None: the reference form)."""

    def __init__(self, root: str) -> None:
        self.root = root

    def __call__(self, node: Node) -> Compiled | None:
        kind = node[0]
        if kind == "name":
            return _identity if node[1] == self.root else _null
        if self._field(node):
            return _keys([name for _, name in node[2]])
        if kind == "cmp":
            return self._compare(node[1], node[2], node[3])
        if kind == "call" and node[1] == "contains" and len(node[2]) == 2:
            container, text = node[2]
            if self._field(container) and text[0] == "lit" and type(text[1]) is str:
                return _contains_text(build(container, self), text[1])
        if kind == "and" or kind == "or":
            return _junction(kind, [build(n, self) for n in node[1]])
        return None

    def _field(self, node: Node) -> bool:
        """Whether ``node`` is ``r.a`` or ``r.a.b`` … (keys of the root only: reading them cannot fail)."""
        return node[0] == "path" and node[1] == ("name", self.root) and all(k == "key" for k, _ in node[2])

    def _compare(self, op: str, left_node: Node, right_node: Node) -> Compiled | None:
        items = _literals(right_node) if op in ("in", "not in") else None
        if right_node[0] != "lit" and items is None:
            return None
        left = build(left_node, self)
        if items is not None:
            return _member(left, items, op == "in")
        value = right_node[1]
        if op == "==":
            return lambda r: left(r) == value
        if op == "!=":
            return lambda r: left(r) != value
        fn = COMPARE[op]
        return lambda r: fn(left(r), value)


def _identity(rec: Any) -> Any:
    return rec


def _null(rec: Any) -> None:
    return None


def _keys(names: list[str]) -> Compiled:
    """``r.a`` (``r.a.b`` …): the record is a dict, so its key is read directly; deeper keys as the reference
    reads them."""
    first, rest = names[0], names[1:]
    if not rest:
        return lambda r: r.get(first)

    def deep(r: Record) -> Any:
        value = r.get(first)
        for name in rest:
            value = get_item(value, name)
        return value

    return deep


def _literals(node: Node) -> tuple[Any, ...] | None:
    """A list of literals as a tuple (membership in it is membership in the list the reference builds)."""
    if node[0] == "list" and all(item[0] == "lit" for item in node[1]):
        return tuple(item[1] for item in node[1])
    return None


def _member(left: Compiled, items: tuple[Any, ...], inside: bool) -> Compiled:
    """``x in [literals]`` (``not in``), as ``_contains`` judges a list."""

    def member(r: Record) -> bool:
        value = left(r)
        try:
            found = value in items
        except TypeError:
            found = False
        return found if inside else not found

    return member


def _contains_text(container: Compiled, text: str) -> Compiled:
    """``contains(r.field, 'text')``: a text field is searched case-blind for the literal lower-cased once; any other
    value goes through the function itself (its errors reported as the reference reports them)."""
    needle = text.lower()
    general = build(("call", "contains", [("name", "x"), ("lit", text)]))

    def contains(r: Record) -> Any:
        value = container(r)
        if type(value) is str:
            return needle in value.lower()
        return general({"x": value})

    return contains


def _junction(kind: str, parts: list[Compiled]) -> Compiled:
    """``and`` / ``or``: each part's truth in order, stopping at the first that decides (as ``all``/``any``)."""
    if len(parts) == 2:
        a, b = parts
        if kind == "and":
            return lambda r: bool(a(r)) and bool(b(r))
        return lambda r: bool(a(r)) or bool(b(r))
    decisive = kind == "or"

    def junction(r: Record) -> bool:
        for part in parts:
            if bool(part(r)) is decisive:
                return decisive
        return not decisive

    return junction
