"""Templates: ``${expr}`` references inside strings, lists and dicts, resolved against a context.

A string that is exactly one reference keeps the referenced value's type; a reference
inside longer text is formatted into it (:func:`format_value`). A template renders under one
size budget for all its references (:mod:`coworkenv.expr.budget`), the text it formats charged
with them: three hundred references of a million characters each are one over-budget render,
not three hundred evaluations within bounds.
"""

from __future__ import annotations

import re

from coworkenv.expr.budget import budgeted, charged
from coworkenv.expr.evaluate import Compiled, Context, evaluate
from coworkenv.expr.ops import ExprError, brief

_TEMPLATE = re.compile(r"\$\{([^}]*)\}")


def format_value(value: object) -> str:
    """Render a value for text: integral floats without decimals, others with two."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.2f}"
    if isinstance(value, list):
        return ", ".join(format_value(v) for v in value)
    try:
        return "" if value is None else str(value)
    except ValueError as exc:  # an integer past Python's digit limit for str()
        raise ExprError(f"cannot format {brief(value)}: {exc}") from None


def render(template: object, ctx: Context) -> object:
    """Resolve ``${expr}`` references inside strings, lists and dicts."""
    return compile_template(template)(ctx)


def compile_template(template: object) -> Compiled:
    """``render(template, ctx)`` as a function of ``ctx``: the template is read once, for a caller that renders
    it many times. Each call builds new lists and dicts and evaluates the references in the same order."""
    return budgeted(_compile(template))


def _formatted(value: object) -> str:
    charged(value, "a template's text")
    return format_value(value)


def _compile(template: object) -> Compiled:
    if isinstance(template, str):
        whole = _TEMPLATE.fullmatch(template)
        if whole:
            src = whole.group(1)
            return lambda c: evaluate(src, c)
        if "${" not in template:
            return lambda c: template
        return lambda c: _TEMPLATE.sub(lambda m: _formatted(evaluate(m.group(1), c)), template)
    if isinstance(template, list):
        items = [_compile(v) for v in template]
        return lambda c: [item(c) for item in items]
    if isinstance(template, dict):
        fields = [(k, _compile(v)) for k, v in template.items()]
        return lambda c: {k: field(c) for k, field in fields}
    return lambda c: template


def references(template: object) -> list[str]:
    """All ``${expr}`` expressions inside a template (strings, lists, dicts)."""
    if isinstance(template, str):
        return _TEMPLATE.findall(template)
    if isinstance(template, list):
        return [r for v in template for r in references(v)]
    if isinstance(template, dict):
        return [r for v in template.values() for r in references(v)]
    return []
