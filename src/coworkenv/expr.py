"""A small, safe expression language for specs.

Specs are data: checks, policies, events and reference solutions need predicates
(``args.amount > 500``) and value references (``${r1.items[0].id}``), but spec content is
never handed to ``eval``/``exec``. This module tokenizes and parses the expression itself
and compiles it into closures over a context dict. Only the operators below and the
functions in :data:`FUNCTIONS` exist; attribute access reads dict keys, never Python
attributes.

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

Context = dict[str, Any]
Compiled = Callable[[Context], Any]


class ExprError(ValueError):
    """A syntax or evaluation error in a spec expression."""


_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d+)?)|(?P<str>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')"
    r"|(?P<op>==|!=|<=|>=|\[\*\]|[<>+\-*/%().,\[\]])|(?P<name>[A-Za-z_][A-Za-z0-9_]*))"
)
_KEYWORDS = {"and", "or", "not", "in", "true", "false", "null"}


def _tokenize(src: str) -> list[tuple[str, Any]]:
    tokens: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(src):
        if src[pos:].strip() == "":
            break
        m = _TOKEN.match(src, pos)
        if not m or m.end() == pos:
            raise ExprError(f"unexpected character {src[pos:].strip()[:1]!r} at {pos} in {src!r}")
        pos = m.end()
        if m.group("num") is not None:
            text = m.group("num")
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
    return tokens


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


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": _safe_cmp(lambda a, b: a < b),
    "<=": _safe_cmp(lambda a, b: a <= b),
    ">": _safe_cmp(lambda a, b: a > b),
    ">=": _safe_cmp(lambda a, b: a >= b),
    "in": lambda a, b: _contains(b, a),
    "not in": lambda a, b: not _contains(b, a),
}


def _arith(op: str) -> Callable[[Any, Any], Any]:
    def apply(a: Any, b: Any) -> Any:
        try:
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if op == "/":
                return a / b
            return a % b
        except (TypeError, ArithmeticError) as exc:
            raise ExprError(f"cannot compute {a!r} {op} {b!r}: {exc}") from None

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
    "join": lambda xs, sep=", ": str(sep).join(str(x) for x in (xs or [])),
    "sorted": lambda xs: sorted(xs or []),
    "unique": lambda xs: list(dict.fromkeys(xs or [])),
    "date": lambda s: str(s)[:10] if s else "",
}


def _get(obj: Any, key: Any) -> Any:
    if isinstance(obj, dict):
        try:
            return obj.get(key)
        except TypeError:  # an unhashable key (e.g. a list in a model's arguments) names no entry
            return None
    if isinstance(obj, list | tuple | str) and isinstance(key, int):
        return obj[key] if -len(obj) <= key < len(obj) else None
    return None


class _Parser:
    def __init__(self, src: str) -> None:
        self.src = src
        self.tokens = _tokenize(src)
        self.i = 0

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
            raise ExprError(f"expected {value!r} but found {self.peek()[1]!r} in {self.src!r}")

    def parse(self) -> Compiled:
        node = self.or_()
        if self.peek()[0] != "end":
            raise ExprError(f"unexpected {self.peek()[1]!r} in {self.src!r}")
        return node

    def or_(self) -> Compiled:
        left = self.and_()
        while self.accept("kw", "or"):
            right, prev = self.and_(), left
            left = lambda c, a=prev, b=right: bool(a(c)) or bool(b(c))  # noqa: E731
        return left

    def and_(self) -> Compiled:
        left = self.not_()
        while self.accept("kw", "and"):
            right, prev = self.not_(), left
            left = lambda c, a=prev, b=right: bool(a(c)) and bool(b(c))  # noqa: E731
        return left

    def not_(self) -> Compiled:
        if self.accept("kw", "not"):
            inner = self.not_()
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
        right, fn = self.sum_(), _COMPARE[op]
        return lambda c: fn(left(c), right(c))

    def _binary(self, ops: tuple[str, ...], sub: Callable[[], Compiled]) -> Compiled:
        left = sub()
        while self.peek()[0] == "op" and self.peek()[1] in ops:
            fn = _arith(self.take()[1])
            right, prev = sub(), left
            left = lambda c, a=prev, b=right, f=fn: f(a(c), b(c))  # noqa: E731
        return left

    def sum_(self) -> Compiled:
        return self._binary(("+", "-"), self.product)

    def product(self) -> Compiled:
        return self._binary(("*", "/", "%"), self.unary)

    def unary(self) -> Compiled:
        if self.accept("op", "-"):
            inner = self.unary()
            neg = _arith("-")
            return lambda c: neg(0, inner(c))
        return self.postfix()

    def postfix(self) -> Compiled:
        base = self.primary()
        steps: list[tuple[str, Any]] = []
        while True:
            if self.accept("op", "."):
                kind, name = self.take()
                if kind not in ("name", "kw"):
                    raise ExprError(f"expected a field name after '.' in {self.src!r}")
                steps.append(("key", name))
            elif self.accept("op", "[*]"):
                steps.append(("map", None))
            elif self.accept("op", "["):
                steps.append(("index", self.or_()))
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
            inner = self.or_()
            self.expect("op", ")")
            return inner
        if kind == "op" and value == "[":
            items: list[Compiled] = []
            if not self.accept("op", "]"):
                items.append(self.or_())
                while self.accept("op", ","):
                    items.append(self.or_())
                self.expect("op", "]")
            return lambda c: [item(c) for item in items]
        if kind == "name":
            if self.accept("op", "("):
                return self.call(value)
            return lambda c: c.get(value)
        raise ExprError(f"unexpected {value!r} in {self.src!r}")

    def call(self, name: str) -> Compiled:
        fn = FUNCTIONS.get(name)
        if fn is None:
            raise ExprError(f"unknown function {name!r} in {self.src!r}; known: {sorted(FUNCTIONS)}")
        args: list[Compiled] = []
        if not self.accept("op", ")"):
            args.append(self.or_())
            while self.accept("op", ","):
                args.append(self.or_())
            self.expect("op", ")")

        def invoke(c: Context) -> Any:
            try:
                return fn(*(a(c) for a in args))
            except ExprError:
                raise
            except (TypeError, ValueError, ArithmeticError) as exc:
                raise ExprError(f"{name}(): {exc}") from None

        return invoke


def _walk(value: Any, steps: list[tuple[str, Any]], ctx: Context) -> Any:
    for pos, (kind, arg) in enumerate(steps):
        if kind == "key":
            value = _get(value, arg)
        elif kind == "index":
            value = _get(value, arg(ctx))
        else:
            rest = steps[pos + 1 :]
            return [_walk(item, rest, ctx) for item in (value or [])]
    return value


@lru_cache(maxsize=4096)
def compile_expr(src: str) -> Compiled:
    """Parse ``src`` once; the result is a function of a context dict."""
    return _Parser(src).parse()


def evaluate(src: str, ctx: Context) -> Any:
    """Evaluate an expression against ``ctx``."""
    return compile_expr(src)(ctx)


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
    return "" if value is None else str(value)


def render(template: Any, ctx: Context) -> Any:
    """Resolve ``${expr}`` references inside strings, lists and dicts.

    A string that is exactly one reference keeps the referenced value's type; a reference
    inside longer text is formatted into it.
    """
    if isinstance(template, str):
        whole = _TEMPLATE.fullmatch(template)
        if whole:
            return evaluate(whole.group(1), ctx)
        if "${" not in template:
            return template
        return _TEMPLATE.sub(lambda m: format_value(evaluate(m.group(1), ctx)), template)
    if isinstance(template, list):
        return [render(v, ctx) for v in template]
    if isinstance(template, dict):
        return {k: render(v, ctx) for k, v in template.items()}
    return template


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
