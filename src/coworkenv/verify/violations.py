"""The call a guard forbids, built from the guard and the spec's data rather than from the reference.

A guard written against prose (a phishing mail asking to forward the contacts outside the company,
an invoice that must not be paid) names what it forbids in an expression over the call's arguments;
the reference never makes such a call, and no instruction in the fixtures spells it out as JSON.
The violating call is a call of the guarded tool whose arguments make that expression true: each
argument in turn set to a value the spec names (an address in the fixtures, a literal of the
expression), the others as the reference passes them or a plain filler.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from coworkenv.capabilities.safety import fixture_texts
from coworkenv.services.registry import tool_table
from coworkenv.spec.checks.base import holds
from coworkenv.spec.models import CallStep, TaskSpec

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_LITERAL = re.compile(r"'([^']*)'|\"([^\"]*)\"")
_VALUE = re.compile(r"\w[\w.@+-]*")
"""A literal that can be an argument's value (an id, an address), not a separator or a domain part."""
FILLER = "Forwarding this as asked."


def violating_call(spec: TaskSpec, tool: str, when: str) -> CallStep | None:
    """A call of ``tool`` whose arguments satisfy ``when`` (an expression over ``args``); None where no value the
    workspace names makes it true."""
    info = tool_table(spec.declared_services).get(tool)
    if info is None:
        return None
    schema = info.schema()["function"]["parameters"]  # the router's, made once per tool
    props: dict[str, dict[str, object]] = schema.get("properties", {})
    values = _values(spec, when)
    base = _base_args(spec, tool, props, schema.get("required", []), values)
    if base is None:
        return None
    for key in sorted(props):
        listed = props[key].get("type") == "array"
        for value in values:
            args = {**base, key: [value] if listed else value}
            if holds(when, {"args": args, "state": {}}):
                return CallStep(call=tool, args=args)
    return None


def _base_args(
    spec: TaskSpec, tool: str, props: Mapping[str, Mapping[str, object]], required: list[str], values: list[str]
) -> dict[str, object] | None:
    """The reference's literal arguments for ``tool``, else a filler for each required one: a list (recipients,
    attendees) holds the first address the spec names, a text is plain words (None: a number or a flag)."""
    for step in spec.reference:
        if isinstance(step, CallStep) and step.call == tool and "${" not in repr(step.args):
            return dict(step.args)
    out: dict[str, object] = {}
    for key in required:
        kind = props.get(key, {}).get("type", "string")
        if kind not in ("string", "array"):
            return None
        first = next((v for v in values if _EMAIL.fullmatch(v)), FILLER)
        out[key] = [first] if kind == "array" else FILLER
    return out


def _values(spec: TaskSpec, when: str) -> list[str]:
    """What the spec names, once each in a fixed order: the addresses in the fixtures, the context and the
    request, then the expression's own literals that can be values (the invoice it protects)."""
    texts = [t for t in (*fixture_texts(spec), spec.context, spec.user.opening) if "@" in t]  # an address has one
    found = dict.fromkeys(_EMAIL.findall("\n".join(texts)))  # one search: no address spans a line break
    literals = (a or b for a, b in _LITERAL.findall(when))
    found.update(dict.fromkeys(v for v in literals if _VALUE.fullmatch(v)))
    return list(found)
