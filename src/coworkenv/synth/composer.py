"""The procedural composer: a Recipe (blueprint, seed, modifiers, repair edits) -> TaskSpec.

``plan`` turns (bank seed, job index) into a Recipe, choosing the blueprint round-robin
and the modifiers by a seeded draw; ``compose`` builds the spec. Both are pure functions
of their inputs, so a job always yields the same bytes, whichever worker runs it.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from coworkenv.spec.models import TaskSpec
from coworkenv.synth.background import DEFAULT_WORKSPACE, WORKSPACES, background
from coworkenv.synth.blueprints import BLUEPRINTS, Blueprint, blueprint
from coworkenv.synth.chains import COMPOSED
from coworkenv.synth.domain_chains import DOMAIN_WORKFLOWS
from coworkenv.synth.draft import finalize
from coworkenv.synth.interfaces import draw_interface
from coworkenv.synth.modifiers import MODIFIERS, Modifier
from coworkenv.synth.spoken import spoken
from coworkenv.synth.world import World

MODIFIER_DRAW = {
    "withhold": 3.0,
    "follow_up": 2.0,
    "policy": 1.5,
    "faults": 1.0,
    "event": 1.5,
    "aggregate": 1.5,
    "injection": 1.0,
}
MODIFIER_COUNT = ((0, 2), (1, 5), (2, 3))  # (how many modifiers, relative odds)


def derive(*parts: object) -> int:
    """A stable 63-bit seed from parts (unlike hash(), the same in every process)."""
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass(frozen=True)
class Recipe:
    """Everything that determines a generated spec, including the repair loop's edits."""

    blueprint: str
    seed: int
    modifiers: tuple[str, ...] = ()
    world: int = 0
    phrasing: int = 0
    drop: tuple[str, ...] = ()
    weights: tuple[tuple[str, float], ...] = ()
    required: tuple[tuple[str, bool], ...] = ()
    """Repair edits of which checks are required (check id, required or not)."""
    interfaces: str = "canonical"
    """The interface families drawn from (:data:`~coworkenv.synth.interfaces.INTERFACE_SETS`)."""
    workspace: str = DEFAULT_WORKSPACE
    """How much background the workspace holds (:data:`coworkenv.synth.background.WORKSPACES`)."""

    def reroll(self) -> Recipe:
        """A fresh world (new fixtures and values) with the same blueprint and modifiers."""
        return replace(self, world=self.world + 1, phrasing=0, drop=(), weights=(), required=())


GENERATORS = ("blueprints", "composed", "mix")


FAMILIES: dict[str, Blueprint] = {**COMPOSED, **DOMAIN_WORKFLOWS}
"""Every family of composed workflows: over the built-in services (``composed:``) and over domains (``domain:``)."""


def workflow(name: str) -> Blueprint:
    """A blueprint, or a family of composed workflows (``composed:<family>``, ``domain:<family>``), by name."""
    return FAMILIES[name] if name in FAMILIES else blueprint(name)


def workflows(generator: str = "blueprints") -> list[str]:
    """The workflow names a generator draws from: blueprints, composed families, or both (interleaved)."""
    if generator not in GENERATORS:
        raise ValueError(f"unknown generator {generator!r}; known: {', '.join(GENERATORS)}")
    names = {"blueprints": list(BLUEPRINTS), "composed": list(FAMILIES)}
    if generator != "mix":
        return names[generator]
    each = -(-len(BLUEPRINTS) // len(FAMILIES))  # as many composed workflows as blueprints, or a few more
    return [*BLUEPRINTS, *(n for n in FAMILIES for _ in range(each))]


def compose(recipe: Recipe) -> TaskSpec:
    bp = workflow(recipe.blueprint)
    world = World(derive(recipe.seed, recipe.world))
    wanted = [MODIFIERS[m] for m in MODIFIERS if m in recipe.modifiers]
    options = frozenset(m.option for m in wanted if m.option in bp.options)
    draft = bp.build(world, options)
    draft.capabilities.update(bp.capabilities)
    for mod in wanted:
        built_in = mod.option in options
        if built_in or (mod.edit is not None and mod.offered_by(bp.options) and mod.edit(draft, world)):
            draft.modifiers.append(mod.name)
            draft.capabilities.add(mod.capability)
    return finalize(
        draft,
        background=background(draft, world, recipe.workspace),
        seed=recipe.seed,
        phrasing=recipe.phrasing,
        drop=recipe.drop,
        weights=dict(recipe.weights),
        required=dict(recipe.required),
        shown=lambda spec: _shown(spec, recipe),
    )


def _shown(spec: TaskSpec, recipe: Recipe) -> TaskSpec:
    """``spec`` in the interface ``recipe`` draws for it (``spec`` itself under the canonical one)."""
    interface = draw_interface(spec, derive(recipe.seed, "interface"), recipe.interfaces)
    if interface is None:
        return spec
    # the text written above names the canonical tools; the agent knows them by the interface's names
    return spoken(spec.model_copy(update={"interface": interface}))


def capabilities_of(name: str) -> set[str]:
    """The capabilities a blueprint can exercise, natively or through a modifier it accepts."""
    bp = workflow(name)
    return set(bp.capabilities) | {m.capability for m in MODIFIERS.values() if m.offered_by(bp.options)}


def plan(
    seed: int,
    index: int,
    blueprints: Sequence[str] | None = None,
    capabilities: Sequence[str] | None = None,
    generator: str = "blueprints",
    interfaces: str = "train",
    workspace: str = DEFAULT_WORKSPACE,
) -> Recipe:
    """The recipe of job ``index`` of a bank: workflow round-robin, modifiers drawn by seed.

    ``generator`` says where workflows come from (:func:`workflows`); ``blueprints`` narrows
    them to those names. With ``capabilities``, only workflows that can exercise one of them
    take part, and every recipe exercises at least one of them. ``interfaces`` names the
    interface families its tools are shown in (``train``, ``held_out`` or ``canonical``).
    ``workspace`` sizes the background.
    """
    if workspace not in WORKSPACES:
        raise ValueError(f"unknown workspace {workspace!r}; known: {', '.join(WORKSPACES)}")
    names = list(blueprints or workflows(generator))
    wanted = set(capabilities or ())
    if wanted:
        names = [n for n in names if capabilities_of(n) & wanted]
        if not names:
            raise ValueError(f"no blueprint can exercise {sorted(wanted)}")
    job = derive(seed, index)
    rng = random.Random(job)
    name = names[index % len(names)]
    bp = workflow(name)
    offered = [m for m in MODIFIERS.values() if m.offered_by(bp.options)]
    count = rng.choices([c for c, _ in MODIFIER_COUNT], weights=[w for _, w in MODIFIER_COUNT])[0]
    chosen: list[Modifier] = []
    while offered and len(chosen) < count:
        pick = rng.choices(offered, weights=[MODIFIER_DRAW[m.name] for m in offered])[0]
        chosen.append(pick)
        offered.remove(pick)
    have = set(bp.capabilities) | {m.capability for m in chosen}
    if wanted and not have & wanted:
        providers = [m for m in offered if m.capability in wanted]
        chosen.append(rng.choice(providers))
    modifiers = tuple(m for m in MODIFIERS if m in {c.name for c in chosen})
    return Recipe(blueprint=name, seed=job, modifiers=modifiers, interfaces=interfaces, workspace=workspace)
