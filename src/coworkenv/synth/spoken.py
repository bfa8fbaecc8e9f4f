"""A synthesized spec's agent-visible text under its interface: tools named as the agent sees them.

Modifiers and blueprints write text that names tools (a planted instruction to ``call mail_send with
{"to": [...]}``, a rule about ``calendar_create_event``, the reference asking to go ahead "with" a tool)
before the environment's interface is drawn, so they can only name the canonical tools. Once it is drawn,
:func:`spoken` renders every text the agent reads (or, for the reference, says) through it: an
instruction naming a tool the agent does not have would test nothing. The fields that name tools for the
runtime (a rule's ``tool``, a check, a reference call, an event trigger, conditions) stay canonical.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from coworkenv.spec.interface import TextRendering
from coworkenv.spec.models import TaskSpec

TEXT: Final = "text"
"""The value is a text the agent reads."""
EVERY: Final = "every"
"""Every text inside the value is (a record's fields)."""
Shape = Mapping[str, "str | Shape"]

_REQUEST: Shape = {
    "persona": TEXT,
    "opening": TEXT,
    "hidden_facts": {"reply": TEXT, "question": TEXT},
    "confirmations": {"reply": TEXT},
    "follow_ups": {"message": TEXT},
    "context_replies": {"reply": TEXT},
    "fallback_reply": TEXT,
}
_EVENTS: Shape = {"notify": TEXT, "mutations": {"record": EVERY}}
_FAULTS: Shape = {"message": TEXT}
_REFERENCE: Shape = {"say": TEXT, "ask": TEXT, "question": TEXT, "confirm": TEXT, "answer": TEXT}
_STAGE: Shape = {
    "notify": TEXT,
    "mutations": {"record": EVERY},
    "user": _REQUEST,
    "events": _EVENTS,
    "faults": _FAULTS,
    "reference": _REFERENCE,
}
VISIBLE: Shape = {
    "context": TEXT,
    "user": _REQUEST,
    "rules": {"description": TEXT},
    "events": _EVENTS,
    "faults": _FAULTS,
    "reference": _REFERENCE,
    "stages": _STAGE,
}
"""Where a spec holds text the agent reads besides its fixtures (every text of which it may read): the user's
words, rules, notices, errors, the teacher's words (a list's items share their shape)."""


def spoken(spec: TaskSpec) -> TaskSpec:
    """``spec`` with every text the agent reads naming tools as its interface shows them (``spec`` itself when no
    text names a tool the interface renders otherwise)."""
    if spec.interface is None:
        return spec
    render = TextRendering(spec.interface)
    services = _render_every(spec.services, render)  # already plain data: most of a spec, walked without a dump
    data = spec.model_dump(mode="json", exclude_none=True, exclude={"services", "declared_services", "interface"})
    rendered = _render(data, VISIBLE, render)
    if services is spec.services and rendered is data:
        return spec
    assert isinstance(rendered, dict)
    kept = spec.model_dump(mode="json", exclude_none=True, include={"declared_services", "interface"})
    out = TaskSpec.model_validate({**rendered, **kept, "services": services})
    if services is spec.services:  # the very object, so what was made of it once (its validated records) is found
        out.services = services
    return out


def _render(value: object, shape: str | Shape, render: TextRendering) -> object:
    """``value`` with the texts ``shape`` marks rendered; the very same object where none changed."""
    if shape == EVERY:
        return _render_every(value, render)
    if isinstance(value, str):
        return render(value) if shape == TEXT else value
    if isinstance(value, list):
        items = [_render(v, shape, render) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if not isinstance(value, dict) or shape == TEXT:
        return value
    out = {}
    for key, item in value.items():
        inner = shape if isinstance(shape, str) else shape.get(key)
        out[key] = item if inner is None else _render(item, inner, render)
    return value if all(out[k] is value[k] for k in value) else out


def _render_every(value: object, render: TextRendering) -> object:
    """``value`` with every text in it rendered; the very same object where none changed, each container copied at
    its first change (a realistic workspace's records hold thousands of texts, nearly all naming no tool: a text
    is looked at in its container's loop, not in a call of its own)."""
    mark = render.mark
    if isinstance(value, str):
        return render(value) if mark in value else value
    if isinstance(value, dict):
        changed: dict[object, object] = {}
        for k, v in value.items():
            if isinstance(v, str):
                if mark in v and (text := render(v)) is not v:
                    changed[k] = text
            elif isinstance(v, dict | list) and (new := _render_every(v, render)) is not v:
                changed[k] = new
        return {**value, **changed} if changed else value
    if isinstance(value, list):
        items: list[object] | None = None
        for i, v in enumerate(value):
            if isinstance(v, str):
                new = render(v) if mark in v else v
            elif isinstance(v, dict | list):
                new = _render_every(v, render)
            else:
                continue
            if new is not v:
                items = list(value) if items is None else items
                items[i] = new
        return value if items is None else items
    return value
