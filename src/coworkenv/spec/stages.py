"""Stages of a multi-stage (multi-day) spec, seen one at a time.

Stage 0 is the spec's own request, checks and reference; ``spec.stages[k - 1]`` is stage
``k``. A *stage view* is a plain single-stage TaskSpec of one stage (its request, checks,
reference, events and faults; the shared fixtures, tools, rules and persona), so that everything written
for one request — the scripted user, answer grading, the oracle, the probes, the static
checks — applies to each stage unchanged.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime

from coworkenv.spec.models import TaskSpec, parse_clock
from coworkenv.spec.user import UserScript

STAGE_MARK = "[environment] Stage "
"""How the notice that opens a later stage begins (``[environment] Stage 2 of 3: ...``)."""


def stage_count(spec: TaskSpec) -> int:
    return 1 + len(spec.stages or [])


def stage_view(spec: TaskSpec, k: int) -> TaskSpec:
    """Stage ``k`` as a single-stage spec (not re-validated: it is made of validated parts)."""
    if k == 0:
        return spec if spec.stages is None else spec.model_copy(update={"stages": None})
    stage = (spec.stages or [])[k - 1]
    user = UserScript.model_construct(persona=spec.user.persona, **dict(stage.user))
    return spec.model_copy(
        update={
            "user": user,
            "checks": stage.checks,
            "reference": stage.reference,
            "events": list(stage.events or []),
            "faults": list(stage.faults or []),
            "stages": None,
        }
    )


def stage_views(spec: TaskSpec) -> list[TaskSpec]:
    """Every stage's view, made once for the latest specs (held, so an id is not reused while kept): the verifier
    asks for them a dozen times per spec, and an environment once per episode. A new list each time, of the same
    views (a spec is data that nothing edits in place)."""
    hit = _VIEWS.get(id(spec))
    if hit is None or hit[0] is not spec:
        hit = _VIEWS[id(spec)] = (spec, [stage_view(spec, k) for k in range(stage_count(spec))])
        while len(_VIEWS) > 16:
            _VIEWS.popitem(last=False)
    return list(hit[1])


_VIEWS: OrderedDict[int, tuple[TaskSpec, list[TaskSpec]]] = OrderedDict()


def stage_clocks(spec: TaskSpec) -> list[datetime]:
    """The workspace time at the start of each stage (the spec's clock, then each advance applied)."""
    if spec.clock is None:
        return []
    times = [parse_clock(spec.clock)]
    for stage in spec.stages or []:
        times.append(stage.advance.apply(times[-1]))
    return times


def clock_text(when: datetime) -> str:
    return when.strftime("%A %Y-%m-%d %H:%M")


def current_stage(messages: list[dict[str, object]]) -> int:
    """The stage the conversation is in, read from the latest stage notice (0 before any)."""
    for msg in reversed(messages):
        content = msg.get("content")
        if msg.get("role") == "user" and isinstance(content, str) and content.startswith(STAGE_MARK):
            number = content[len(STAGE_MARK) :].split(" ", 1)[0]
            return int(number) - 1 if number.isdigit() else 0
    return 0
