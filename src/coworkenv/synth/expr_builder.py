"""Expressions built from typed parts, so literals are always quoted by one function.

Blueprints write check and policy conditions as ``E.field("to").has(email) & E.field("body")
.contains(time)`` instead of f-strings: a value with a quote or a backslash (a name like
O'Brien) then still yields a valid expression that means what it says. ``str(expr)`` is the
expression text the verifier and the grader parse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

_OR, _AND, _NOT, _COMPARE, _SUM, _PRODUCT, _ATOM = 0, 1, 2, 3, 4, 5, 6


def literal(value: object) -> str:
    """``value`` as an expression literal (strings quoted and escaped, lists element by element)."""
    if isinstance(value, Expr):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _side(value: object, binding: int) -> str:
    """An operand: a literal, or an expression parenthesised when it binds more loosely than ``binding``."""
    if isinstance(value, Expr) and value.binding < binding:
        return f"({value.text})"
    return literal(value)


@dataclass(frozen=True)
class Expr:
    """An expression's text and how tightly it binds (so ``and``/``or`` parenthesise only when needed)."""

    text: str
    binding: int = _ATOM

    def __str__(self) -> str:
        return self.text

    def _compare(self, op: str, value: object) -> Expr:
        return Expr(f"{_side(self, _SUM)} {op} {_side(value, _SUM)}", _COMPARE)

    def eq(self, value: object) -> Expr:
        return self._compare("==", value)

    def in_(self, values: Sequence[object]) -> Expr:
        """This value is one of ``values``."""
        return self._compare("in", list(values))

    def has(self, item: object) -> Expr:
        """This list holds ``item`` (``item in r.x``)."""
        return Expr(f"{_side(item, _SUM)} in {_side(self, _SUM)}", _COMPARE)

    def contains(self, text: object) -> Expr:
        """This text (or list) contains ``text``."""
        return fn("contains", self, text)

    def count(self, text: object) -> Expr:
        """How many times this text contains ``text`` (ignoring case)."""
        return fn("count", self, text)

    def startswith(self, text: object) -> Expr:
        return fn("startswith", self, text)

    def len(self) -> Expr:
        return fn("len", self)

    def join(self, sep: str = " ") -> Expr:
        return fn("join", self, sep)

    def __add__(self, other: object) -> Expr:
        return Expr(f"{_side(self, _SUM)} + {_side(other, _PRODUCT)}", _SUM)

    def __mul__(self, other: object) -> Expr:
        return Expr(f"{_side(self, _PRODUCT)} * {_side(other, _ATOM)}", _PRODUCT)

    def __and__(self, other: Expr) -> Expr:
        return and_(self, other)

    def __or__(self, other: Expr) -> Expr:
        return or_(self, other)


def path(*parts: str) -> Expr:
    """A dotted name: ``path("prior", "text")`` is ``prior.text``."""
    return Expr(".".join(parts))


def template(expr: Expr) -> str:
    """``expr`` as a reference template (``${...}``), evaluated when the reference runs."""
    return "${" + expr.text + "}"


def field(name: str) -> Expr:
    """A field of the record a check or guard looks at (``r.<name>``)."""
    return path("r", name)


def arg(name: str) -> Expr:
    """An argument of the tool call a policy looks at (``args.<name>``)."""
    return path("args", name)


def fn(name: str, *args: object) -> Expr:
    """A call of an expression function (``contains``, ``join``, ``len``...)."""
    return Expr(f"{name}({', '.join(literal(a) for a in args)})")


def _join(word: str, binding: int, parts: Sequence[Expr]) -> Expr:
    if not parts:
        raise ValueError(f"{word} of nothing")
    texts = [p.text if p.binding >= binding else f"({p.text})" for p in parts]
    return Expr(f" {word} ".join(texts), binding if len(parts) > 1 else parts[0].binding)


def and_(*parts: Expr) -> Expr:
    return _join("and", _AND, parts)


def or_(*parts: Expr) -> Expr:
    return _join("or", _OR, parts)


def not_(part: Expr) -> Expr:
    return Expr("not " + (part.text if part.binding >= _NOT else f"({part.text})"), _NOT)
