"""The spec constructs as prompt text, read off the spec models themselves.

Every check kind, event and fault field, stage field, user-script field and reference step is
described from its model's docstring and field descriptions, and the services from the
registry, so the generator's prompt names whatever the models accept and cannot drift from
them: a construct added to the models reaches the prompt with its own description.
"""

from __future__ import annotations

import inspect
from functools import cache
from typing import get_args

from pydantic import BaseModel

from coworkenv.services.registry import SERVICES
from coworkenv.spec import models as m
from coworkenv.spec.declared import CollectionDecl, FieldDecl, ParamDecl, ServiceDecl, ToolDecl
from coworkenv.spec.user import Confirmation, ContextReply, FollowUp, HiddenFact


def check_models() -> list[type[BaseModel]]:
    """The models of the ``Check`` union, in its order (``Annotated[Union[...], discriminator]``)."""
    return list(get_args(get_args(m.Check)[0]))


def check_kind(model: type[BaseModel]) -> str:
    return str(model.model_fields["kind"].default)


def describe(model: type[BaseModel]) -> str:
    """A model's docstring on one line, its reStructuredText marks dropped (empty when it has none)."""
    text = inspect.cleandoc(model.__doc__ or "").replace("``", "`").replace(":mod:", "")
    return " ".join(text.split())


def field_list(model: type[BaseModel], skip: frozenset[str] = frozenset()) -> str:
    """The model's fields: ``name`` (``?`` when optional), with its description where it has one."""
    parts = []
    for name, info in model.model_fields.items():
        if name in skip:
            continue
        label = f"`{name}`" + ("" if info.is_required() else "?")
        parts.append(f"{label} ({info.description})" if info.description else label)
    return ", ".join(parts)


def _item(name: str, model: type[BaseModel], skip: frozenset[str] = frozenset()) -> str:
    return f"- {name}: {describe(model)} Fields: {field_list(model, skip)}."


def _checks() -> list[str]:
    models = check_models()
    common = frozenset.intersection(*(frozenset(c.model_fields) for c in models)) - {"kind"}
    lines = [
        "## Checks (`checks`, and each stage's own; `kind` picks one)",
        f"Every check has {field_list(models[0], frozenset(models[0].model_fields) - common)}.",
    ]
    lines += [f"- `{check_kind(c)}`: {describe(c)} Fields: {field_list(c, common | {'kind'})}." for c in models]
    guards = ", ".join(f"`{g}`" for g in m.GUARD_KINDS)
    lines.append(
        f"Guards say what must not happen and may hold at the start: {guards} (a `record_absent` only when "
        "nothing matches at the start). Every other check must be false before the agent acts."
    )
    return lines


Part = tuple[str, type[BaseModel]] | str
"""A described model (its label in the prompt, the model) or a note."""


def _section(title: str, parts: list[Part]) -> list[str]:
    return [f"## {title}", *(p if isinstance(p, str) else _item(*p) for p in parts)]


def _sections() -> list[list[str]]:
    steps: list[Part] = [(s.__name__, s) for s in (m.CallStep, m.AskStep, m.ConfirmStep, m.AnswerStep)]
    return [
        _section(
            "Events, faults and workflow rules",
            [
                ("`events` (scheduled changes of the workspace)", m.Event),
                ("an event's `mutations`", m.Mutation),
                "Templates: an `on_tool` event's `notify` and mutations may read the triggering call's arguments "
                "as `${args.<name>}`; a `when` filter is an expression over `args`. A mutation's `where` reads "
                "only the record `r` (no templates); use it to change a record the agent created earlier, and "
                "make it match exactly one record when the reference's run makes the change.",
                ("`faults` (injected transient tool errors)", m.Fault),
                ("`rules` (workflow rules, checked on every call)", m.Rule),
            ],
        ),
        _section(
            "The user (`user`, and each stage's `user`)",
            [
                ("`user`", m.UserScript),
                ("`hidden_facts`", HiddenFact),
                ("`confirmations`", Confirmation),
                ("`follow_ups`", FollowUp),
                ("`context_replies`", ContextReply),
            ],
        ),
        _section("Reference steps (`reference`, and each stage's)", steps),
        _section(
            "Stages (`stages`: later days of a multi-day workflow; the spec needs a `clock`)",
            [
                ("a stage", m.Stage),
                ("`advance`", m.Advance),
                "With stages, the first stage's reference and every stage's reference end with an `answer`; "
                "each stage's reference re-reads what it needs (it cannot use another stage's saved results).",
            ],
        ),
    ]


def _services() -> list[str]:
    names = ", ".join(f"`{name}` ({cls.description})" for name, cls in SERVICES.items())
    declared = m.TaskSpec.model_fields["declared_services"].description
    parts: list[Part] = [
        f"Built in: {names}. Their records and tools are listed in the catalogue below.",
        f"`declared_services`: {declared}; each also needs an entry (fixtures, maybe empty) in `services`.",
        ("`declared_services`", ServiceDecl),
        ("a collection", CollectionDecl),
        ("a field", FieldDecl),
        ("a tool", ToolDecl),
        ("a tool parameter", ParamDecl),
    ]
    return _section("Services", parts)


@cache
def constructs_text() -> str:
    """Every construct a TaskSpec may use, with what it means, as prompt text."""
    sections = [[_item("A TaskSpec", m.TaskSpec)], _checks(), *_sections(), _services()]
    return "\n\n".join("\n".join(lines) for lines in sections)
