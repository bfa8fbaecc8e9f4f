"""Reading an expression: tokens, then a tree of plain tuples (the one parse both evaluators start from).

The source is spec content, so reading it is bounded (:data:`MAX_SOURCE` characters,
:data:`MAX_DIGITS` digits per number, :data:`MAX_DEPTH` levels of nesting) and every
malformed input is an :class:`ExprError` naming the expression. Unknown functions are
refused here, at parse time, so a tree only ever names functions in :data:`FUNCTIONS`.

Nodes (the first item names the kind)::

    ("lit", value)                      a number, string, true, false or null
    ("name", name)                      a top-level name, read from the context
    ("list", [node, ...])
    ("call", name, [node, ...])
    ("path", base, [step, ...])         step: ("key", name) | ("index", node) | ("map", None)
    ("cmp", op, left, right)            op: == != < <= > >= in, not in
    ("chain", first, [(op, node), ...]) a left-associative run of + - or * / %
    ("neg", node) | ("not", node)
    ("and", [node, ...]) | ("or", [node, ...])
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from coworkenv.expr.ops import FUNCTIONS, ExprError

Node = tuple[Any, ...]
"""A node of the syntax tree: its kind, then its parts (a value, a name, child nodes or steps)."""
Token = tuple[str, object]
"""A token's kind and its text, or the value of a number literal."""

MAX_SOURCE = 4000
"""Characters in one expression (the longest in the examples and blueprints is under 200)."""
MAX_DEPTH = 40
"""Nesting of brackets, calls, ``not`` and unary minus."""
MAX_DIGITS = 30
"""Digits of a number literal."""


_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d+)?)|(?P<str>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')"
    r"|(?P<op>==|!=|<=|>=|\[\*\]|[<>+\-*/%().,\[\]])|(?P<name>[A-Za-z_][A-Za-z0-9_]*))"
)
_KEYWORDS = {"and", "or", "not", "in", "true", "false", "null"}
_CONSTANTS = {"true": True, "false": False, "null": None}
_BLANK_TAIL = re.compile(r"\s*\Z")
_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


def show(src: str) -> str:
    """The expression for an error message, shortened: messages must stay readable."""
    return repr(src if len(src) <= 120 else src[:100] + "…")


@lru_cache(maxsize=4096)
def tokenize(src: str) -> tuple[Token, ...]:
    """The tokens of ``src``, once per source: parsing and ``root_names`` both read them."""
    if len(src) > MAX_SOURCE:
        raise ExprError(f"expression of {len(src)} characters is longer than {MAX_SOURCE}: {show(src)}")
    tokens: list[Token] = []
    pos = 0
    while not _BLANK_TAIL.match(src, pos):
        m = _TOKEN.match(src, pos)
        if not m or m.end() == pos:
            raise ExprError(f"unexpected character {src[pos:].strip()[:1]!r} at {pos} in {show(src)}")
        pos = m.end()
        if m.group("num") is not None:
            text = m.group("num")
            if len(text) > MAX_DIGITS:
                raise ExprError(f"number literal of {len(text)} digits (at most {MAX_DIGITS}) in {show(src)}")
            tokens.append(("lit", float(text) if "." in text else int(text)))
        elif m.group("str") is not None:
            body = m.group("str")[1:-1]
            tokens.append(("lit", re.sub(r"\\(.)", r"\1", body)))
        elif m.group("op") is not None:
            tokens.append(("op", m.group("op")))
        else:
            name = m.group("name")
            tokens.append(("kw" if name in _KEYWORDS else "name", name))
    tokens.append(("end", None))
    return tuple(tokens)


@lru_cache(maxsize=4096)
def parse(src: str) -> Node:
    """The tree of ``src`` (raises ExprError for a malformed or over-long expression)."""
    return _Parser(src).parse()


class _Parser:
    def __init__(self, src: str) -> None:
        self.src = src
        self.tokens = tokenize(src)
        self.i = 0
        self.depth = 0

    def nested(self, parse: Callable[[], Node]) -> Node:
        """Parse one level deeper, refusing nesting past :data:`MAX_DEPTH`."""
        if self.depth >= MAX_DEPTH:
            raise ExprError(f"expression nested deeper than {MAX_DEPTH} levels: {show(self.src)}")
        self.depth += 1
        try:
            return parse()
        finally:
            self.depth -= 1

    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def accept(self, kind: str, value: object = None) -> bool:
        tok = self.peek()
        if tok[0] == kind and (value is None or tok[1] == value):
            self.i += 1
            return True
        return False

    def expect(self, kind: str, value: object) -> None:
        if not self.accept(kind, value):
            raise ExprError(f"expected {value!r} but found {self.peek()[1]!r} in {show(self.src)}")

    def parse(self) -> Node:
        node = self.or_()
        if self.peek()[0] != "end":
            raise ExprError(f"unexpected {self.peek()[1]!r} in {show(self.src)}")
        return node

    def or_(self) -> Node:
        parts = [self.and_()]
        while self.accept("kw", "or"):
            parts.append(self.and_())
        return parts[0] if len(parts) == 1 else ("or", parts)

    def and_(self) -> Node:
        parts = [self.not_()]
        while self.accept("kw", "and"):
            parts.append(self.not_())
        return parts[0] if len(parts) == 1 else ("and", parts)

    def not_(self) -> Node:
        if self.accept("kw", "not"):
            return ("not", self.nested(self.not_))
        return self.compare()

    def compare(self) -> Node:
        left = self.sum_()
        tok = self.peek()
        op = None
        if tok[0] == "op" and tok[1] in _COMPARISONS:
            op = self.take()[1]
        elif tok == ("kw", "in"):
            self.take()
            op = "in"
        elif tok == ("kw", "not") and self.tokens[self.i + 1] == ("kw", "in"):
            self.i += 2
            op = "not in"
        if op is None:
            return left
        return ("cmp", op, left, self.sum_())

    def _binary(self, ops: tuple[str, ...], sub: Callable[[], Node]) -> Node:
        """A left-associative chain, kept flat (a long chain must not nest)."""
        first = sub()
        rest: list[tuple[str, Node]] = []
        while self.peek()[0] == "op" and self.peek()[1] in ops:
            rest.append((str(self.take()[1]), sub()))  # an operator token holds its text
        return ("chain", first, rest) if rest else first

    def sum_(self) -> Node:
        return self._binary(("+", "-"), self.product)

    def product(self) -> Node:
        return self._binary(("*", "/", "%"), self.unary)

    def unary(self) -> Node:
        if self.accept("op", "-"):
            return ("neg", self.nested(self.unary))
        return self.postfix()

    def postfix(self) -> Node:
        base = self.primary()
        steps: list[Token] = []
        while True:
            if self.accept("op", "."):
                kind, name = self.take()
                if kind not in ("name", "kw"):
                    raise ExprError(f"expected a field name after '.' in {show(self.src)}")
                steps.append(("key", name))
            elif self.accept("op", "[*]"):
                steps.append(("map", None))
            elif self.accept("op", "["):
                steps.append(("index", self.nested(self.or_)))
                self.expect("op", "]")
            else:
                break
        return ("path", base, steps) if steps else base

    def primary(self) -> Node:
        kind, value = self.take()
        if kind == "lit":
            return ("lit", value)
        if kind == "kw" and value in _CONSTANTS:
            return ("lit", _CONSTANTS[value])
        if kind == "op" and value == "(":
            inner = self.nested(self.or_)
            self.expect("op", ")")
            return inner
        if kind == "op" and value == "[":
            return ("list", self.items("]"))
        if kind == "name":
            if self.accept("op", "("):
                if value not in FUNCTIONS:
                    raise ExprError(f"unknown function {value!r} in {show(self.src)}; known: {sorted(FUNCTIONS)}")
                return ("call", value, self.items(")"))
            return ("name", value)
        raise ExprError(f"unexpected {value!r} in {show(self.src)}")

    def items(self, close: str) -> list[Node]:
        """Comma-separated expressions up to ``close`` (a list's items, a call's arguments)."""
        items: list[Node] = []
        if not self.accept("op", close):
            items.append(self.nested(self.or_))
            while self.accept("op", ","):
                items.append(self.nested(self.or_))
            self.expect("op", close)
        return items
