"""The values side of the expression language: operators, functions and their size bounds.

Operands come from specs and from model output, so every operation that can build a large
value checks the size first (:data:`MAX_RESULT`), ``%`` is the numeric remainder only (a
string on its left would be printf-style formatting, which reads keys, width and precision
from the data), and any failure is an :class:`ExprError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class ExprError(ValueError):
    """A syntax or evaluation error in a spec expression."""


MAX_RESULT = 1_000_000
"""Characters or items of a string or list built by ``+``, ``*`` or ``join``."""


def _safe_cmp(fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def cmp(a: Any, b: Any) -> bool:
        try:
            return bool(fn(a, b))
        except TypeError:
            return False

    return cmp


def _contains(container: Any, item: Any) -> bool:
    if container is None:
        return False
    if isinstance(container, str):
        return str(item).lower() in container.lower()
    try:
        return item in container
    except TypeError:
        return False


COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": _safe_cmp(lambda a, b: a < b),
    "<=": _safe_cmp(lambda a, b: a <= b),
    ">": _safe_cmp(lambda a, b: a > b),
    ">=": _safe_cmp(lambda a, b: a >= b),
    "in": lambda a, b: _contains(b, a),
    "not in": lambda a, b: not _contains(b, a),
}


def _sized(value: Any) -> Any:
    """``value`` if it is not a string or list over :data:`MAX_RESULT`."""
    if isinstance(value, str | list) and len(value) > MAX_RESULT:
        raise ExprError(f"result of {len(value)} characters or items is larger than {MAX_RESULT}")
    return value


def brief(value: Any) -> str:
    """A short, always-computable description of an operand for error messages."""
    if isinstance(value, int) and abs(value) >= 10**30:
        return "<a large integer>"
    if value is None or isinstance(value, str | int | float):
        text = repr(value)
        return text if len(text) <= 60 else text[:50] + "…"
    return f"<a {type(value).__name__}>"


def _repeat(a: Any, b: Any) -> Any:
    """``*`` with the size of a repeated string or list checked before it is built."""
    seq, n = (a, b) if isinstance(a, str | list) else (b, a)
    if isinstance(seq, str | list) and isinstance(n, int) and len(seq) * max(n, 0) > MAX_RESULT:
        raise ExprError(f"repetition would build {len(seq) * n} characters or items (at most {MAX_RESULT})")
    return a * b


def _remainder(a: Any, b: Any) -> Any:
    if isinstance(a, str) or isinstance(b, str):  # never printf-style formatting
        raise TypeError("'%' is the remainder of two numbers")
    return a % b


_ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: _sized(a + b),
    "-": lambda a, b: a - b,
    "*": _repeat,
    "/": lambda a, b: a / b,
    "%": _remainder,
}


def arith(op: str) -> Callable[[Any, Any], Any]:
    fn = _ARITH[op]

    def apply(a: Any, b: Any) -> Any:
        try:
            return fn(a, b)
        except (TypeError, ValueError, ArithmeticError) as exc:
            raise ExprError(f"cannot compute {brief(a)} {op} {brief(b)}: {exc}") from None

    return apply


def _numbers(xs: Any) -> list[float]:
    return [x for x in (xs or []) if isinstance(x, int | float) and not isinstance(x, bool)]


def _round(x: Any, ndigits: int = 0) -> Any:
    return round(x, int(ndigits)) if ndigits else round(x)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "len": lambda x: len(x) if x is not None else 0,
    "sum": lambda xs: sum(_numbers(xs)),
    "min": lambda xs: min(_numbers(xs), default=None),
    "max": lambda xs: max(_numbers(xs), default=None),
    "round": _round,
    "abs": abs,
    "lower": lambda s: str(s).lower() if s is not None else "",
    "upper": lambda s: str(s).upper() if s is not None else "",
    "str": lambda x: "" if x is None else str(x),
    "int": int,
    "float": float,
    "contains": _contains,
    "startswith": lambda s, p: isinstance(s, str) and s.lower().startswith(str(p).lower()),
    "endswith": lambda s, p: isinstance(s, str) and s.lower().endswith(str(p).lower()),
    "any": lambda xs: any(xs or []),
    "all": lambda xs: all(xs or []),
    "first": lambda xs: xs[0] if xs else None,
    "last": lambda xs: xs[-1] if xs else None,
    "join": lambda xs, sep=", ": _sized(str(sep).join(str(x) for x in (xs or []))),
    "sorted": lambda xs: sorted(xs or []),
    "unique": lambda xs: list(dict.fromkeys(xs or [])),
    "date": lambda s: str(s)[:10] if s else "",
}


def get_item(obj: Any, key: Any) -> Any:
    if isinstance(obj, dict):
        try:
            return obj.get(key)
        except TypeError:  # an unhashable key (e.g. a list in a model's arguments) names no entry
            return None
    if isinstance(obj, list | tuple | str) and isinstance(key, int):
        return obj[key] if -len(obj) <= key < len(obj) else None
    return None
