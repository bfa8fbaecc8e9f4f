"""The values side of the expression language: operators and functions, each charged for what it builds.

Operands come from specs and from model output, so every operation that can build a large
value charges its expanded size to the evaluation's budget before building it
(:mod:`coworkenv.expr.budget`), ``%`` is the numeric remainder only (a string on its left
would be printf-style formatting, which reads keys, width and precision from the data), and
any failure is an :class:`ExprError`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Container
from typing import Any

from coworkenv.expr.budget import ExprError, built, charge, charged, left, size

__all__ = ["COMPARE", "FUNCTIONS", "ExprError", "arith", "brief", "get_item", "text_of"]

Binary = Callable[[object, object], object]
"""An operator on two values of the language (any JSON value, or what an operation built from them)."""
Compare = Callable[[object, object], bool]


def _safe_cmp(fn: Callable[[Any, Any], object]) -> Compare:
    """An ordering of two values: ``fn`` is Python's own, so values of no common order compare false."""

    def cmp(a: object, b: object) -> bool:
        try:
            return bool(fn(a, b))
        except TypeError:
            return False

    return cmp


def text_of(value: object) -> str:
    """``str(value)``, charged first: the text of a list is as long as everything it holds."""
    if isinstance(value, str):
        return value
    charged(value, "text of a value")
    return str(value)


def _contains(container: object, item: object) -> bool:
    if container is None:
        return False
    if isinstance(container, str):
        return text_of(item).lower() in container.lower()
    if not isinstance(container, Container):
        return False
    try:
        return item in container
    except TypeError:  # an unhashable item, looked for among a dict's keys
        return False


COMPARE: dict[str, Compare] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": _safe_cmp(operator.lt),
    "<=": _safe_cmp(operator.le),
    ">": _safe_cmp(operator.gt),
    ">=": _safe_cmp(operator.ge),
    "in": lambda a, b: _contains(b, a),
    "not in": lambda a, b: not _contains(b, a),
}


def brief(value: object) -> str:
    """A short, always-computable description of an operand for error messages."""
    if isinstance(value, int) and abs(value) >= 10**30:
        return "<a large integer>"
    if value is None or isinstance(value, str | int | float):
        text = repr(value)
        return text if len(text) <= 60 else text[:50] + "…"
    return f"<a {type(value).__name__}>"


def _repeat(a: object, b: object) -> object:
    """``*``, with a repeated string or list charged at its expanded size before it is built."""
    seq, n = (a, b) if isinstance(a, str | list) else (b, a)
    if not isinstance(seq, str | list) or not isinstance(n, int):
        return operator.mul(a, b)
    amount = size(seq, left()) * max(n, 0)
    charge(amount, "repetition")
    return built(seq * n, amount)


def _concat(a: object, b: object) -> object:
    """``+``, with two strings or lists charged at their expanded size before they are joined."""
    if not (isinstance(a, str | list) and isinstance(b, str | list)):
        return operator.add(a, b)
    amount = size(a, left()) + size(b, left())
    charge(amount, "'+'")
    return built(operator.add(a, b), amount)


def _remainder(a: object, b: object) -> object:
    if isinstance(a, str) or isinstance(b, str):  # never printf-style formatting
        raise TypeError("'%' is the remainder of two numbers")
    return operator.mod(a, b)


_ARITH: dict[str, Binary] = {
    "+": _concat,
    "-": operator.sub,
    "*": _repeat,
    "/": operator.truediv,
    "%": _remainder,
}


def arith(op: str) -> Binary:
    fn = _ARITH[op]

    def apply(a: object, b: object) -> object:
        try:
            return fn(a, b)
        except (TypeError, ValueError, ArithmeticError) as exc:
            raise ExprError(f"cannot compute {brief(a)} {op} {brief(b)}: {exc}") from None

    return apply


def _items(xs: object) -> Collection[object]:
    """The items of a list operand (``null`` holds none); a number is refused as Python refuses it."""
    items = xs or []
    if not isinstance(items, Collection):
        raise TypeError(f"'{type(items).__name__}' object is not iterable")
    return items


def _numbers(xs: object) -> list[float]:
    return [x for x in _items(xs) if isinstance(x, int | float) and not isinstance(x, bool)]


def _round(x: float, ndigits: int = 0) -> float:
    return round(x, int(ndigits)) if ndigits else round(x)


def _join(xs: object, sep: object = ", ") -> str:
    items = _items(xs)
    between = text_of(sep)
    charge(size(items, left()) + len(between) * len(items), "join()")
    return between.join(text_of(x) for x in items)


def _whole(fn: Callable[..., object], what: str) -> Callable[[object], object]:
    """``fn`` over a list, charged at the list's expanded size first (sorting or hashing reads all of it)."""

    def apply(xs: object) -> object:
        items = _items(xs)
        return built(fn(items), charged(items, what))

    return apply


FUNCTIONS: dict[str, Callable[..., object]] = {
    # each takes the values of the language as they come: a wrong one raises as Python does, reported as an ExprError
    "len": lambda x: len(x) if x is not None else 0,
    "sum": lambda xs: sum(_numbers(xs)),
    "min": lambda xs: min(_numbers(xs), default=None),
    "max": lambda xs: max(_numbers(xs), default=None),
    "round": _round,
    "abs": abs,
    "lower": lambda s: text_of(s).lower() if s is not None else "",
    "upper": lambda s: text_of(s).upper() if s is not None else "",
    "str": lambda x: "" if x is None else text_of(x),
    "int": int,
    "float": float,
    "contains": _contains,
    "count": lambda s, part: text_of(s).lower().count(text_of(part).lower()) if part else 0,
    "startswith": lambda s, p: isinstance(s, str) and s.lower().startswith(text_of(p).lower()),
    "endswith": lambda s, p: isinstance(s, str) and s.lower().endswith(text_of(p).lower()),
    "any": lambda xs: any(xs or []),
    "all": lambda xs: all(xs or []),
    "first": lambda xs: xs[0] if xs else None,
    "last": lambda xs: xs[-1] if xs else None,
    "join": _join,
    "sorted": _whole(sorted, "sorted()"),
    "unique": _whole(lambda xs: list(dict.fromkeys(xs)), "unique()"),
    "date": lambda s: text_of(s)[:10] if s else "",
}


def get_item(obj: object, key: object) -> object:
    if isinstance(obj, dict):
        try:
            return obj.get(key)
        except TypeError:  # an unhashable key (e.g. a list in a model's arguments) names no entry
            return None
    if isinstance(obj, list | tuple | str) and isinstance(key, int):
        return obj[key] if -len(obj) <= key < len(obj) else None
    return None
