"""The mix of oracle demos an SFT run trains on: menu variants and multi-turn oversampling.

A small model trained on one rendering per environment learns *which line of the menu* to
copy as much as what the workflow needs: the same tools, in the same order, with the same
two distractors every time. Held-out workflows then show it menus it never saw. So each
training environment can be rendered under several menus (:func:`menu_variant`: its own
seeded draw of distractors, in a shuffled order), and multi-turn environments, the subset
that gained least from SFT, get ``multi_turn_weight`` times as many variants. Variants of
one environment share a ``group`` (its spec id), so a validation split keeps them together
and never scores the model on a conversation it trained on under another menu.
Variant 0 is exactly the menu evaluation prompts use (:func:`~coworkenv.agents.tool_menu.narrow_tools`).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from coworkenv.agents import OracleTeacher
from coworkenv.agents.tool_menu import narrow_tools, parse_menu
from coworkenv.data.sft import sft_example
from coworkenv.runtime import Environment, run_episode
from coworkenv.runtime.router import exposed_tools
from coworkenv.spec.models import TaskSpec, refuse_evaluation_only


@dataclass(frozen=True)
class MixSettings:
    menu: str = "spec+2"
    """the evaluation menu (``spec``, ``spec+N`` or ``all``); variant 0 renders with it."""
    variants: int = 1
    """menus per environment (1: only the evaluation menu)."""
    multi_turn_weight: int = 1
    """multi-turn environments get this many times ``variants``."""
    extra_distractors: int = 2
    """variants after the first draw between N and N + this many distractors."""

    def __post_init__(self) -> None:
        parse_menu(self.menu)
        if self.variants < 1 or self.multi_turn_weight < 1 or self.extra_distractors < 0:
            raise ValueError("variants and multi_turn_weight must be ≥ 1, extra_distractors ≥ 0")


def menu_variant(spec: TaskSpec, menu: str, k: int, extra: int = 2) -> TaskSpec:
    """The spec under its ``k``-th menu: 0 is the evaluation menu; later ones redraw and shuffle.

    ``spec`` is the environment as banked: one already narrowed has no other tools to draw from.

    Variant k > 0 offers the tools the spec needs plus N..N+``extra`` distractors (``spec+N``),
    drawn and ordered by a generator seeded with the spec id and k. ``all`` shuffles every tool.
    """
    base = narrow_tools(spec, menu)
    if k == 0:
        return base
    rng = random.Random(f"{spec.id}:{k}")
    kind, n = parse_menu(menu)
    offered = list(exposed_tools(list(spec.services), spec.tools, spec.declared_services))
    if kind == "all":
        keep = offered
    else:
        needed = narrow_tools(spec, "spec").tools or []
        others = [t for t in offered if t not in needed]
        keep = [*needed, *rng.sample(others, min(n + rng.randint(0, extra), len(others)))]
    rng.shuffle(keep)
    return spec.model_copy(update={"tools": keep})


def variant_count(spec: TaskSpec, s: MixSettings) -> int:
    return s.variants * (s.multi_turn_weight if spec.is_multi_turn else 1)


def oracle_mix(specs: Sequence[TaskSpec], s: MixSettings | None = None) -> list[dict[str, object]]:
    """SFT records of passing oracle runs, one per menu variant; ``group`` is the spec id. Evaluation-only specs
    are refused (ValueError): demonstrations are training data."""
    refuse_evaluation_only(specs, "SFT demonstrations")
    s = s or MixSettings()
    demos = []
    for spec in specs:
        for k in range(variant_count(spec, s)):
            traj = run_episode(Environment(menu_variant(spec, s.menu, k, s.extra_distractors)), OracleTeacher())
            if traj.grade is not None and traj.grade.passed:
                record = sft_example(traj)
                demos.append({**record, "group": spec.id, "capabilities": list(spec.capabilities)} | _flag(spec))
    return demos


def _flag(spec: TaskSpec) -> dict[str, object]:
    return {"multi_turn": spec.is_multi_turn, "blueprint": spec.provenance.blueprint}


def composition(demos: Sequence[dict[str, Any]]) -> dict[str, object]:
    """What a demo mix teaches: counts per capability and blueprint, multi-turn share, distinct menus."""
    n = len(demos)
    caps: Counter[str] = Counter(c for d in demos for c in d.get("capabilities") or ())
    menus = {(d.get("group"), tuple(t["function"]["name"] for t in d["tools"])) for d in demos}
    multi = sum(bool(d.get("multi_turn")) for d in demos)
    return {
        "demos": n,
        "environments": len({d.get("group") for d in demos}),
        "distinct_menus": len(menus),
        "multi_turn": multi,
        "multi_turn_share": round(100.0 * multi / n, 1) if n else 0.0,
        "by_capability": {c: round(100.0 * k / n, 1) for c, k in sorted(caps.items())} if n else {},
        "blueprints": len({d.get("blueprint") for d in demos}),
    }
