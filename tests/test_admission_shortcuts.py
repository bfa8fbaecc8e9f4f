"""The admission rule's short ways give what the long ways gave.

- one reference run: a second one, in a fresh environment of another seed, plays the same episode
  (the verifier draws no random faults, so the seed is never read), on every example, broken spec
  and blueprint spec;
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coworkenv.agents.oracle import OracleTeacher
from coworkenv.runtime.environment import Environment
from coworkenv.spec import TaskSpec, load_spec
from coworkenv.synth.blueprints import BLUEPRINTS
from coworkenv.synth.composer import compose, plan
from coworkenv.verify.admission import Played, outcome, play
from coworkenv.verify.fast_forward import ReferenceTrunk
from coworkenv.verify.static import static_findings

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*(ROOT / "examples").glob("*.yaml"), *(ROOT / "tests" / "broken_specs").glob("*.yaml")])


def _blueprint_specs() -> list[TaskSpec]:
    """One composed spec of every blueprint (what bank jobs verify)."""
    return [compose(plan(0, i, [name])) for i, name in enumerate(sorted(BLUEPRINTS))]


def _fields(played: Played) -> tuple[object, ...]:
    return (
        played.grade,
        played.state_hash,
        played.messages,
        played.fired,
        played.done_reason,
        played.records,
        played.fired_at,
        played.starts,
    )


def _played(path: Path) -> TaskSpec | None:
    """The spec at ``path`` if the verifier gets as far as its reference run (else None)."""
    try:
        spec = load_spec(path)
    except Exception:  # a broken spec that does not even load never reaches a reference run
        return None
    return None if static_findings(spec) else spec


@pytest.mark.parametrize("source", ["files", "blueprints"])
def test_one_reference_run_is_what_two_would_be(source: str) -> None:
    specs = [s for s in map(_played, FILES) if s is not None] if source == "files" else _blueprint_specs()
    assert len(specs) >= 20
    for spec in specs:
        env = Environment(spec, seed=0)
        ReferenceTrunk.record(env)
        recorded = outcome(env)
        assert env.fault_rate == 0 and env.rng.getstate() == Environment(spec, seed=0).rng.getstate(), spec.id
        again = play(Environment(spec, seed=1), OracleTeacher())
        assert _fields(recorded) == _fields(again), spec.id
