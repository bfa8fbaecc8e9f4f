"""The reference evaluator: a parsed expression turned into closures over a context dict.

Every node becomes one closure; names read the context (``c.get``), paths read dict keys
and list items through :func:`get_item`, operators and functions are those of
:mod:`coworkenv.expr.ops`. This is the evaluator for every context (checks, rules, events,
the user, templates).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from coworkenv.expr.budget import budgeted, built, charge, charged
from coworkenv.expr.ops import COMPARE, FUNCTIONS, Binary, ExprError, arith, get_item
from coworkenv.expr.parse import Node, parse, show

Context = Mapping[str, object]
"""The names an expression reads, with their values (JSON values: arguments, records, tool results)."""
Compiled = Callable[[Context], Any]
"""An expression or template as a function of its context. A template's result has the shape of the template
(a dict template gives a dict, a text one text), so callers read it as such."""


@lru_cache(maxsize=4096)
def compile_expr(src: str) -> Compiled:
    """Parse ``src`` once; the result is a function of a context dict, run under its own size budget."""
    return budgeted(build(parse(src)))


def evaluate(src: str, ctx: Context) -> object:
    """Evaluate an expression against ``ctx``.

    Values in ``ctx`` come from model output: comparing or hashing one nested thousands of
    levels deep overflows Python's stack, which is reported as an ExprError.
    """
    try:
        return compile_expr(src)(ctx)
    except RecursionError:
        raise ExprError(f"a value in {show(src)} is nested too deeply to evaluate") from None


def check_syntax(src: str) -> str | None:
    """Return an error message for a malformed expression, or None."""
    try:
        compile_expr(src)
    except ExprError as exc:
        return str(exc)
    return None


def build(node: Node) -> Compiled:
    """The closure of one node (its children's closures built first)."""
    kind = node[0]
    if kind == "lit":
        value = node[1]
        return lambda c: value
    if kind == "name":
        name = node[1]
        return lambda c: c.get(name)
    if kind == "list":
        items = [build(n) for n in node[1]]
        return lambda c: _literal([item(c) for item in items])
    if kind == "call":
        return _call(node[1], [build(n) for n in node[2]])
    if kind == "path":
        base = build(node[1])
        steps: list[Step] = [(k, build(a) if k == "index" else a) for k, a in node[2]]
        return lambda c: walk(base(c), steps, c)
    if kind == "cmp":
        fn, left, right = COMPARE[node[1]], build(node[2]), build(node[3])
        return lambda c: fn(left(c), right(c))
    if kind == "chain":
        return _chain(build(node[1]), [(arith(op), build(n)) for op, n in node[2]])
    if kind == "neg":
        inner, neg = build(node[1]), arith("-")
        return lambda c: neg(0, inner(c))
    if kind == "not":
        inner = build(node[1])
        return lambda c: not inner(c)
    parts = [build(n) for n in node[1]]
    if kind == "and":
        return lambda c: all(bool(p(c)) for p in parts)
    return lambda c: any(bool(p(c)) for p in parts)


def _literal(items: list[object]) -> list[object]:
    """A list literal, charged at its expanded size (``[x, x, x]`` holds ``x`` three times)."""
    return built(items, charged(items, "a list"))


def _chain(first: Compiled, rest: list[tuple[Binary, Compiled]]) -> Compiled:
    """A left-associative chain, evaluated in a loop (a long chain must not nest closures)."""

    def chain(c: Context) -> object:
        value = first(c)
        for fn, right in rest:
            value = fn(value, right(c))
        return value

    return chain


def _call(name: str, args: list[Compiled]) -> Compiled:
    fn = FUNCTIONS[name]

    def invoke(c: Context) -> object:
        try:
            return fn(*(a(c) for a in args))
        except ExprError:
            raise
        except (TypeError, ValueError, ArithmeticError, LookupError, RecursionError) as exc:
            raise ExprError(f"{name}(): {str(exc)[:200]}") from None

    return invoke


Step = tuple[str, str | Compiled | None]
"""A path's step: ``("key", name)``, ``("index", its expression)`` or ``("map", None)`` for ``[*]``."""


def walk(value: object, steps: list[Step], ctx: Context) -> object:
    """Follow a path's steps from ``value``: keys, indexes (``arg(ctx)``) and ``[*]`` maps."""
    for pos, (kind, arg) in enumerate(steps):
        if kind != "map":
            value = get_item(value, arg(ctx) if callable(arg) else arg)
        else:
            rest = steps[pos + 1 :]
            if value is not None and not isinstance(value, list):
                raise ExprError(f"[*] needs a list, got {type(value).__name__}")
            charge(len(value or []), "[*]")  # its items are values that exist already
            return [walk(item, rest, ctx) for item in (value or [])]
    return value
