"""A small, safe expression language for specs.

Specs are data: checks, policies, events and reference solutions need predicates
(``args.amount > 500``) and value references (``${r1.items[0].id}``), but spec content is
never handed to ``eval``/``exec``. This module tokenizes and parses the expression itself
and compiles it into closures over a context dict. Only the operators below and the
functions in :data:`FUNCTIONS` exist; attribute access reads dict keys, never Python
attributes; ``%`` is the numeric remainder only (no printf-style string formatting).

Expressions come from spec files and are evaluated against model output, so every cost is
bounded: source length, literal digits and nesting depth at parse time; the size of a
string or list an operator or function builds at run time. Anything over a bound is an
:class:`ExprError`, never a hang, a crash or a RecursionError.

Grammar (lowest precedence first)::

    or:      and ('or' and)*
    and:     not ('and' not)*
    not:     'not' not | compare
    compare: sum (('=='|'!='|'<'|'<='|'>'|'>='|'in'|'not in') sum)?
    sum:     product (('+'|'-') product)*
    product: unary (('*'|'/'|'%') unary)*
    unary:   '-' unary | postfix
    postfix: primary ('.' NAME | '[' expr ']' | '[*]')*     # [*] maps the rest over a list
    primary: NUMBER | STRING | true | false | null | NAME '(' args ')' | NAME
             | '(' expr ')' | '[' items ']'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from coworkenv.expr_ops import COMPARE, FUNCTIONS, ExprError, arith, brief, get_item

__all__ = [
    "FUNCTIONS",
    "ExprError",
    "check_syntax",
    "compile_expr",
    "compile_template",
    "evaluate",
    "format_value",
    "record_fields",
    "references",
    "render",
    "root_names",
]

Context = dict[str, Any]
Compiled = Callable[[Context], Any]


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
_BLANK_TAIL = re.compile(r"\s*\Z")


def _show(src: str) -> str:
    """The expression for an error message, shortened: messages must stay readable."""
    return repr(src if len(src) <= 120 else src[:100] + "…")


@lru_cache(maxsize=4096)
def _tokenize(src: str) -> tuple[tuple[str, Any], ...]:
    """The tokens of ``src``, once per source: parsing, ``root_names`` and ``record_fields`` all read them."""
    if len(src) > MAX_SOURCE:
        raise ExprError(f"expression of {len(src)} characters is longer than {MAX_SOURCE}: {_show(src)}")
    tokens: list[tuple[str, Any]] = []
    pos = 0
    while not _BLANK_TAIL.match(src, pos):
        m = _TOKEN.match(src, pos)
        if not m or m.end() == pos:
            raise ExprError(f"unexpected character {src[pos:].strip()[:1]!r} at {pos} in {_show(src)}")
        pos = m.end()
        if m.group("num") is not None:
            text = m.group("num")
            if len(text) > MAX_DIGITS:
                raise ExprError(f"number literal of {len(text)} digits (at most {MAX_DIGITS}) in {_show(src)}")
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


class _Parser:
    def __init__(self, src: str) -> None:
        self.src = src
        self.tokens = _tokenize(src)
        self.i = 0
        self.depth = 0

    def nested(self, parse: Callable[[], Compiled]) -> Compiled:
        """Parse one level deeper, refusing nesting past :data:`MAX_DEPTH`."""
        if self.depth >= MAX_DEPTH:
            raise ExprError(f"expression nested deeper than {MAX_DEPTH} levels: {_show(self.src)}")
        self.depth += 1
        try:
            return parse()
        finally:
            self.depth -= 1

    def peek(self) -> tuple[str, Any]:
        return self.tokens[self.i]

    def take(self) -> tuple[str, Any]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def accept(self, kind: str, value: Any = None) -> bool:
        tok = self.peek()
        if tok[0] == kind and (value is None or tok[1] == value):
            self.i += 1
            return True
        return False

    def expect(self, kind: str, value: Any) -> None:
        if not self.accept(kind, value):
            raise ExprError(f"expected {value!r} but found {self.peek()[1]!r} in {_show(self.src)}")

    def parse(self) -> Compiled:
        node = self.or_()
        if self.peek()[0] != "end":
            raise ExprError(f"unexpected {self.peek()[1]!r} in {_show(self.src)}")
        return node

    def or_(self) -> Compiled:
        parts = [self.and_()]
        while self.accept("kw", "or"):
            parts.append(self.and_())
        return parts[0] if len(parts) == 1 else lambda c: any(bool(p(c)) for p in parts)

    def and_(self) -> Compiled:
        parts = [self.not_()]
        while self.accept("kw", "and"):
            parts.append(self.not_())
        return parts[0] if len(parts) == 1 else lambda c: all(bool(p(c)) for p in parts)

    def not_(self) -> Compiled:
        if self.accept("kw", "not"):
            inner = self.nested(self.not_)
            return lambda c: not inner(c)
        return self.compare()

    def compare(self) -> Compiled:
        left = self.sum_()
        tok = self.peek()
        op = None
        if tok[0] == "op" and tok[1] in ("==", "!=", "<", "<=", ">", ">="):
            op = self.take()[1]
        elif tok == ("kw", "in"):
            self.take()
            op = "in"
        elif tok == ("kw", "not") and self.tokens[self.i + 1] == ("kw", "in"):
            self.i += 2
            op = "not in"
        if op is None:
            return left
        right, fn = self.sum_(), COMPARE[op]
        return lambda c: fn(left(c), right(c))

    def _binary(self, ops: tuple[str, ...], sub: Callable[[], Compiled]) -> Compiled:
        """A left-associative chain, evaluated in a loop (a long chain must not nest closures)."""
        first = sub()
        rest: list[tuple[Callable[[Any, Any], Any], Compiled]] = []
        while self.peek()[0] == "op" and self.peek()[1] in ops:
            rest.append((arith(self.take()[1]), sub()))
        if not rest:
            return first

        def chain(c: Context) -> Any:
            value = first(c)
            for fn, right in rest:
                value = fn(value, right(c))
            return value

        return chain

    def sum_(self) -> Compiled:
        return self._binary(("+", "-"), self.product)

    def product(self) -> Compiled:
        return self._binary(("*", "/", "%"), self.unary)

    def unary(self) -> Compiled:
        if self.accept("op", "-"):
            inner = self.nested(self.unary)
            neg = arith("-")
            return lambda c: neg(0, inner(c))
        return self.postfix()

    def postfix(self) -> Compiled:
        base = self.primary()
        steps: list[tuple[str, Any]] = []
        while True:
            if self.accept("op", "."):
                kind, name = self.take()
                if kind not in ("name", "kw"):
                    raise ExprError(f"expected a field name after '.' in {_show(self.src)}")
                steps.append(("key", name))
            elif self.accept("op", "[*]"):
                steps.append(("map", None))
            elif self.accept("op", "["):
                steps.append(("index", self.nested(self.or_)))
                self.expect("op", "]")
            else:
                break
        if not steps:
            return base
        return lambda c: _walk(base(c), steps, c)

    def primary(self) -> Compiled:
        kind, value = self.take()
        if kind == "lit":
            return lambda c: value
        if kind == "kw" and value in ("true", "false", "null"):
            const = {"true": True, "false": False, "null": None}[value]
            return lambda c: const
        if kind == "op" and value == "(":
            inner = self.nested(self.or_)
            self.expect("op", ")")
            return inner
        if kind == "op" and value == "[":
            items: list[Compiled] = []
            if not self.accept("op", "]"):
                items.append(self.nested(self.or_))
                while self.accept("op", ","):
                    items.append(self.nested(self.or_))
                self.expect("op", "]")
            return lambda c: [item(c) for item in items]
        if kind == "name":
            if self.accept("op", "("):
                return self.call(value)
            return lambda c: c.get(value)
        raise ExprError(f"unexpected {value!r} in {_show(self.src)}")

    def call(self, name: str) -> Compiled:
        fn = FUNCTIONS.get(name)
        if fn is None:
            raise ExprError(f"unknown function {name!r} in {_show(self.src)}; known: {sorted(FUNCTIONS)}")
        args: list[Compiled] = []
        if not self.accept("op", ")"):
            args.append(self.nested(self.or_))
            while self.accept("op", ","):
                args.append(self.nested(self.or_))
            self.expect("op", ")")

        def invoke(c: Context) -> Any:
            try:
                return fn(*(a(c) for a in args))
            except ExprError:
                raise
            except (TypeError, ValueError, ArithmeticError, LookupError, RecursionError) as exc:
                raise ExprError(f"{name}(): {str(exc)[:200]}") from None

        return invoke


def _walk(value: Any, steps: list[tuple[str, Any]], ctx: Context) -> Any:
    for pos, (kind, arg) in enumerate(steps):
        if kind == "key":
            value = get_item(value, arg)
        elif kind == "index":
            value = get_item(value, arg(ctx))
        else:
            rest = steps[pos + 1 :]
            if value is not None and not isinstance(value, list):
                raise ExprError(f"[*] needs a list, got {type(value).__name__}")
            return [_walk(item, rest, ctx) for item in (value or [])]
    return value


@lru_cache(maxsize=4096)
def compile_expr(src: str) -> Compiled:
    """Parse ``src`` once; the result is a function of a context dict."""
    return _Parser(src).parse()


def evaluate(src: str, ctx: Context) -> Any:
    """Evaluate an expression against ``ctx``.

    Values in ``ctx`` come from model output: comparing or hashing one nested thousands of
    levels deep overflows Python's stack, which is reported as an ExprError.
    """
    try:
        return compile_expr(src)(ctx)
    except RecursionError:
        raise ExprError(f"a value in {_show(src)} is nested too deeply to evaluate") from None


def check_syntax(src: str) -> str | None:
    """Return an error message for a malformed expression, or None."""
    try:
        compile_expr(src)
    except ExprError as exc:
        return str(exc)
    return None


_TEMPLATE = re.compile(r"\$\{([^}]*)\}")


def format_value(value: Any) -> str:
    """Render a value for text: integral floats without decimals, others with two."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.2f}"
    if isinstance(value, list):
        return ", ".join(format_value(v) for v in value)
    try:
        return "" if value is None else str(value)
    except ValueError as exc:  # an integer past Python's digit limit for str()
        raise ExprError(f"cannot format {brief(value)}: {exc}") from None


def render(template: Any, ctx: Context) -> Any:
    """Resolve ``${expr}`` references inside strings, lists and dicts.

    A string that is exactly one reference keeps the referenced value's type; a reference
    inside longer text is formatted into it.
    """
    return compile_template(template)(ctx)


def compile_template(template: Any) -> Compiled:
    """``render(template, ctx)`` as a function of ``ctx``: the template is read once, for a caller that renders
    it many times. Each call builds new lists and dicts and evaluates the references in the same order."""
    if isinstance(template, str):
        whole = _TEMPLATE.fullmatch(template)
        if whole:
            src = whole.group(1)
            return lambda c: evaluate(src, c)
        if "${" not in template:
            return lambda c: template
        return lambda c: _TEMPLATE.sub(lambda m: format_value(evaluate(m.group(1), c)), template)
    if isinstance(template, list):
        items = [compile_template(v) for v in template]
        return lambda c: [item(c) for item in items]
    if isinstance(template, dict):
        fields = [(k, compile_template(v)) for k, v in template.items()]
        return lambda c: {k: field(c) for k, field in fields}
    return lambda c: template


def references(template: Any) -> list[str]:
    """All ``${expr}`` expressions inside a template (strings, lists, dicts)."""
    if isinstance(template, str):
        return _TEMPLATE.findall(template)
    if isinstance(template, list):
        return [r for v in template for r in references(v)]
    if isinstance(template, dict):
        return [r for v in template.values() for r in references(v)]
    return []


def root_names(src: str) -> set[str]:
    """Top-level names an expression reads (used to check references resolve)."""
    names: set[str] = set()
    tokens = _tokenize(src)
    for i, (kind, value) in enumerate(tokens):
        prev = tokens[i - 1] if i else ("", None)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ("end", None)
        if kind == "name" and prev != ("op", ".") and nxt != ("op", "("):
            names.add(value)
    return names


@lru_cache(maxsize=4096)
def record_fields(src: str, root: str = "r") -> frozenset[str] | None:
    """The fields of ``root`` an expression reads, when it reads ``root`` only as ``root.field``; else None.

    An expression is a pure function of its context, so on two records that agree on these fields it gives the
    same value (or fails the same way): the check tracker uses this to skip re-evaluating a check a write cannot
    have changed. None (``root`` passed whole, indexed, or a malformed expression) means: always evaluate."""
    try:
        tokens = _tokenize(src)
    except ExprError:
        return None
    fields: set[str] = set()
    for i, (kind, value) in enumerate(tokens):
        if kind != "name" or value != root or (i and tokens[i - 1] == ("op", ".")):
            continue
        if tokens[i + 1] != ("op", ".") or tokens[i + 2][0] not in ("name", "kw"):
            return None
        fields.add(tokens[i + 2][1])
    return frozenset(fields)
