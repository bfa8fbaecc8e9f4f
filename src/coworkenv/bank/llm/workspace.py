"""Background records for a spec the model wrote: the realistic workspace blueprint and composed specs get.

The model writes the few records its task is about; :func:`with_background` adds the rest of a realistic
workspace with the very draw the composer uses (:func:`coworkenv.synth.background.background`): the
spec's words, values, days and flags taken out of the pools first, so no search, filter or check of its
task can select a background record. The world the background lives in is read off the spec: its user's
address and company, its day. The draw is seeded by the job, so a job's spec is the same bytes in every
run; the verifier then judges the spec with its background, by the same admission rule.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import re
from collections.abc import Mapping, Sequence
from datetime import date

from coworkenv.services.registry import service_class
from coworkenv.spec.io import spec_to_data
from coworkenv.spec.models import Check, ReferenceStep, TaskSpec
from coworkenv.synth.backdrop import Fixtures
from coworkenv.synth.background import WORKSPACES, background
from coworkenv.synth.checks import Checks
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.reference import Reference
from coworkenv.synth.stages import DraftStage
from coworkenv.synth.world import World

_EMAIL = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)+")
_DAY = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")


def with_background(spec: TaskSpec, seed: int, workspace: str) -> TaskSpec:
    """``spec`` with background records for the built-in services it uses (``spec`` itself for a ``small``
    workspace, or when its task leaves too few words to draw from)."""
    if not WORKSPACES[workspace]:
        return spec
    draft = _draft(spec)
    extra = background(draft, _world(spec, draft, seed), workspace)
    if not extra:
        return spec
    return TaskSpec.model_validate({**spec_to_data(spec), "services": _joined(spec, extra)})


def _draft(spec: TaskSpec) -> Draft:
    """The parts of ``spec`` background reads, as the draft a blueprint would have built: everything the task
    reads or writes by (its request, the user's words, reference, checks, rules, events, stages) and its records."""
    user = spec.user
    facts = {f.slot: Fact(f.slot, f.value, "", f.keywords, f.question, f.reply) for f in user.hidden_facts}
    words = [f.message for f in user.follow_ups] + [c.reply for c in user.context_replies or []]
    confirmations = [c.model_dump(exclude_none=True) for c in user.confirmations]
    stages = []
    for stage in spec.stages or []:
        facts |= {
            f"{stage.id}.{f.slot}": Fact(f.slot, f.value, "", f.keywords, f.question, f.reply)
            for f in stage.user.hidden_facts
        }
        words += [f.message for f in stage.user.follow_ups] + [c.reply for c in stage.user.context_replies or []]
        confirmations += [c.model_dump(exclude_none=True) for c in stage.user.confirmations]
        staged = DraftStage(
            stage.id,
            stage.user.opening,
            stage.advance.model_dump(exclude_none=True),
            _reference(stage.reference),
            _checks(stage.checks),
            [m.model_dump(exclude_none=True) for m in stage.mutations],
            events=[e.model_dump(exclude_none=True) for e in stage.events or []],
        )
        stages.append(staged)
    return Draft(
        blueprint=spec.provenance.blueprint or "llm",
        title=spec.title,
        persona=user.persona,
        context=spec.context,
        fixtures=copy.deepcopy(spec.services),
        openings=[user.opening],
        facts=facts,
        reference=_reference(spec.reference),
        checks=_checks(spec.checks),
        capabilities=set(spec.capabilities),
        rules=[r.model_dump(exclude_none=True) for r in spec.rules],
        events=[e.model_dump(exclude_none=True) for e in spec.events],
        follow_ups=words,
        confirmations=confirmations,
        withheld=list(facts),
        stages=stages,
    )


def _reference(steps: Sequence[ReferenceStep]) -> Reference:
    out = Reference()
    for step in steps:
        out.add(step.model_dump(exclude_none=True))
    return out


def _checks(checks: Sequence[Check]) -> Checks:
    out = Checks()
    out.items.extend(checks)
    return out


def _world(spec: TaskSpec, draft: Draft, seed: int) -> World:
    """A world of ``seed`` that is the spec's: its user (the first address its context names, else the one its
    mail is most addressed to), their domain and company, its day; the task's records and people taken."""
    world = World(seed)
    world.fixtures = draft.fixtures
    me = _me(spec)
    if me is not None:
        domain = me.split("@", 1)[1].lower()
        company = _company(spec, domain)
        world.domain, world.company = domain, company
        world.me = dataclasses.replace(world.me, email=me, company=company)
    day = _DAY.search(spec.clock or "") or _DAY.search(spec.context)
    if day is not None:
        with contextlib.suppress(ValueError):  # a date the model got wrong (2025-02-30): keep the world's own
            world.today = date.fromisoformat(day.group(1))
    for records in (rows for colls in spec.services.values() for rows in colls.values()):
        for rec in records:
            name = rec.get("name")
            if isinstance(name, str):
                world.claim(name)
    return world


def _me(spec: TaskSpec) -> str | None:
    found = _EMAIL.search(spec.context)
    if found is not None:
        return found.group(0)
    counts: dict[str, int] = {}
    for message in spec.services.get("mail", {}).get("messages", []):
        to = message.get("to")
        for who in to if isinstance(to, list) else []:
            counts[str(who)] = counts.get(str(who), 0) + 1
    return max(sorted(counts), key=counts.__getitem__) if counts else None


def _company(spec: TaskSpec, domain: str) -> str:
    """The company of the user's colleagues in the directory, else the one the persona says (``... at X``)."""
    for contact in spec.services.get("contacts", {}).get("contacts", []):
        if str(contact.get("email", "")).lower().endswith(f"@{domain}") and contact.get("company"):
            return str(contact["company"])
    persona = spec.user.persona
    return persona.rsplit(" at ", 1)[1].strip(" .") if " at " in persona else ""


def _joined(spec: TaskSpec, extra: Fixtures) -> Fixtures:
    """The spec's records with the background after each collection's own; a background id one of the model's
    records already has is given the next free one (and the background records that name it follow)."""
    out = {service: {coll: list(rows) for coll, rows in colls.items()} for service, colls in spec.services.items()}
    for service, colls in extra.items():
        moved: dict[str, str] = {}
        for coll, rows in colls.items():
            taken = {str(r.get("id")) for r in out.get(service, {}).get(coll, [])}
            moved |= _moved(rows, taken, service_class(service).id_prefix.get(coll, coll[:3]))
        for coll, rows in colls.items():
            out.setdefault(service, {}).setdefault(coll, []).extend(_relabelled(r, moved) for r in rows)
    return out


def _moved(rows: Sequence[Mapping[str, object]], taken: set[str], prefix: str) -> dict[str, str]:
    """New ids for the background ``rows`` whose ids the task's records (``taken``) already have."""
    own = {str(r["id"]) for r in rows}
    moved: dict[str, str] = {}
    n = len(taken) + len(rows)
    for rid in (str(r["id"]) for r in rows if str(r["id"]) in taken):
        n += 1
        while f"{prefix}-{n}" in taken or f"{prefix}-{n}" in own:
            n += 1
        moved[rid] = f"{prefix}-{n}"
    return moved


def _relabelled(record: Mapping[str, object], moved: dict[str, str]) -> dict[str, object]:
    """``record`` with every value that is a moved id (alone or in a list) the new id."""
    return {
        k: [_id(v, moved) for v in value] if isinstance(value, list) else _id(value, moved)
        for k, value in record.items()
    }


def _id(value: object, moved: dict[str, str]) -> object:
    return moved.get(value, value) if isinstance(value, str) else value
