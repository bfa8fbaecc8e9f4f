"""A small, safe expression language for specs.

Specs are data: checks, rules, events and reference solutions need predicates
(``args.amount > 500``) and value references (``${r1.items[0].id}``), but spec content is
never handed to ``eval``/``exec``. The expression is tokenized and parsed here
(:mod:`coworkenv.expr.parse`) and compiled into closures over a context dict
(:mod:`coworkenv.expr.evaluate`; :mod:`coworkenv.expr.template` for ``${expr}`` templates); this
module is their front. Only the operators below and the
functions in :data:`FUNCTIONS` exist; attribute access reads dict keys, never Python
attributes; ``%`` is the numeric remainder only (no printf-style string formatting).

Expressions come from spec files and are evaluated against model output, so every cost is
bounded: source length, literal digits and nesting depth at parse time; at run time, what
one evaluation builds, counted at its expanded size (:mod:`coworkenv.expr.budget`). Anything over a bound is an
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

from coworkenv.expr.evaluate import Compiled, Context, check_syntax, compile_expr, evaluate
from coworkenv.expr.ops import FUNCTIONS, ExprError
from coworkenv.expr.parse import tokenize
from coworkenv.expr.template import compile_template, format_value, references, render

__all__ = [
    "FUNCTIONS",
    "Compiled",
    "Context",
    "ExprError",
    "check_syntax",
    "compile_expr",
    "compile_template",
    "evaluate",
    "format_value",
    "references",
    "render",
    "root_names",
]


def root_names(src: str) -> set[str]:
    """Top-level names an expression reads (used to check references resolve)."""
    names: set[str] = set()
    tokens = tokenize(src)
    for i, (kind, value) in enumerate(tokens):
        prev = tokens[i - 1] if i else ("", None)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ("end", None)
        if kind == "name" and prev != ("op", ".") and nxt != ("op", "("):
            names.add(str(value))  # a name token holds its text
    return names
