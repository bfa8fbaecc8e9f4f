"""Modifiers: the reference still scores 1.0 on the modified task, and the modifier's own probe fails it."""

from __future__ import annotations

import pytest

from coworkenv.agents import OracleTeacher
from coworkenv.bank.repair import synthesize
from coworkenv.grading import PASS_THRESHOLD
from coworkenv.runtime import Environment
from coworkenv.synth.blueprints import BLUEPRINTS
from coworkenv.synth.composer import Recipe, compose
from coworkenv.synth.modifiers import MODIFIERS
from coworkenv.verify.admission import play
from coworkenv.verify.probes import PROBES


def _cases() -> list[tuple[str, str]]:
    """Two blueprints per modifier on which it applies."""
    cases = []
    for mod in MODIFIERS.values():
        hosts = [name for name in BLUEPRINTS if mod.name in compose(Recipe(name, 1, (mod.name,))).provenance.modifiers]
        assert hosts, f"{mod.name} applies to no blueprint"
        cases += [(mod.name, hosts[0]), (mod.name, hosts[len(hosts) // 2])]
    return cases


@pytest.mark.parametrize(("modifier", "blueprint"), _cases())
def test_modifier_keeps_the_reference_and_its_probe_fails(modifier: str, blueprint: str) -> None:
    mod = MODIFIERS[modifier]
    for seed in (1, 2):
        spec = synthesize(Recipe(blueprint, seed, (modifier,))).spec
        if spec is None:
            continue  # rejected with reasons (counted elsewhere); the other seed must do
        assert modifier in spec.provenance.modifiers
        assert mod.capability in spec.capabilities
        env = Environment(spec)
        assert play(env, OracleTeacher()).grade.score == 1.0
        probe = PROBES[mod.probe]
        assert probe.applies(spec)
        assert play(env, probe).grade.score < PASS_THRESHOLD
        plain = compose(Recipe(blueprint, seed))
        native = mod.capability in BLUEPRINTS[blueprint].capabilities
        assert native or mod.capability not in plain.capabilities, "the capability comes from the modifier"
        return
    pytest.fail(f"{modifier} on {blueprint}: no seed admitted")


def test_every_capability_has_a_modifier() -> None:
    from coworkenv.capabilities import CAPABILITIES

    assert {m.capability for m in MODIFIERS.values()} == set(CAPABILITIES) - {"tool_coordination"}
