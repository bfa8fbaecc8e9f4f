"""Forking at a probe's first divergence gives exactly the episode a full replay gives.

For every example, every broken spec that loads and specs of every blueprint, every probe
run the verifier makes (and every pacing run) is played twice: forked from the reference
trunk, one after another in the same environment as the verifier does, and in a fresh
environment from a reset. The verifier's view (score, checks, state hash, transcript), the
trajectory and a fingerprint of every field of the environment must be equal.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coworkenv.agents.oracle import OracleRun, OracleTeacher, StagedRun, stage_oracle
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.episode import play_out
from coworkenv.runtime.fork import Snapshot, Trunk
from coworkenv.runtime.policy import actor_for
from coworkenv.runtime.turn import AssistantTurn, ToolCall
from coworkenv.spec import TaskSpec, load_spec
from coworkenv.spec.stages import stage_count
from coworkenv.synth.blueprints import BLUEPRINTS
from coworkenv.synth.composer import compose, plan
from coworkenv.verify.admission import Played, _pacing_variants, outcome
from coworkenv.verify.fast_forward import ReferenceTrunk, fast_forward
from coworkenv.verify.probe_base import Replay, scripted
from coworkenv.verify.probes import PROBES
from coworkenv.verify.stage_probes import AfterReference, staged_variants
from fork_helpers import fingerprint, first_difference, materialize_indexes

ROOT = Path(__file__).parent.parent


def _loadable(paths: list[Path]) -> dict[str, TaskSpec]:
    out = {}
    for path in paths:
        try:
            spec = load_spec(path)
            Environment(spec)
        except Exception:  # a broken spec that does not load, or whose fixtures do not fit, has no episode
            continue
        out[f"{path.parent.name}/{path.stem}"] = spec
    return out


@cache
def specs() -> dict[str, TaskSpec]:
    found = _loadable(sorted((ROOT / "examples").glob("*.yaml")) + sorted((ROOT / "tests/broken_specs").glob("*.yaml")))
    for seed in (0,):
        for i, name in enumerate(BLUEPRINTS):
            found[f"{name}/{seed}"] = compose(plan(seed, i, [name]))
    return found


def _runs(spec: TaskSpec, reference: Played, trunk: ReferenceTrunk | None = None) -> list[tuple[str, Any]]:
    """Every run the verifier can make of ``spec``, relevant or not (fresh policies on every call; ``trunk``: the
    ignore_change and ignore_event runs branch from it, as the verifier's do, instead of replaying from a reset)."""
    runs = [(name, policy) for _, name, policy in staged_variants(spec, PROBES.values(), trunk)]
    return [("reference", OracleTeacher()), *runs, *_pacing_variants(spec, reference)]


def _same(forked: Environment, full: Environment, label: str) -> None:
    a, b = outcome(forked), outcome(full)
    assert a.grade == b.grade, label
    assert (a.state_change, a.messages, a.fired, a.done_reason, a.records, a.fired_at) == (
        b.state_change, b.messages, b.fired, b.done_reason, b.records, b.fired_at), label  # fmt: skip
    assert forked.trajectory().model_dump() == full.trajectory().model_dump(), label
    materialize_indexes(forked, full)
    difference = first_difference(fingerprint(forked), fingerprint(full))
    assert difference is None, f"{label}: {difference}"


@pytest.mark.parametrize("name", sorted(specs()))
def test_every_probe_forked_equals_full_replay(name: str) -> None:
    spec = specs()[name]
    trunk = ReferenceTrunk.record(Environment(spec, seed=1))
    reference = Environment(spec, seed=1)
    play_out(reference, actor_for(OracleTeacher(), spec))
    _same(trunk.env, reference, f"{name}: reference")
    played = outcome(trunk.env)
    forks, fulls = _runs(spec, played, trunk), _runs(spec, played)
    for (label, policy), (_, twin) in zip(forks, fulls, strict=True):
        trunk.play(actor_for(policy, spec))
        full = Environment(spec, seed=1)
        play_out(full, actor_for(twin, spec))
        _same(trunk.env, full, f"{name}: {label}")


@pytest.mark.parametrize("name", sorted(n for n, spec in specs().items() if spec.stages))
def test_probe_runs_that_stop_at_a_failed_stage_fork_as_full_replays(name: str) -> None:
    """As the verifier plays them: the trunk recorded to its end, the probe runs stopping at a failed stage."""
    spec = specs()[name]
    trunk = ReferenceTrunk.record(Environment(spec, seed=1))
    played = outcome(trunk.env)
    trunk.env.stop_at_failed_stage = True  # kept by every restore from here on
    stopped = 0
    for (label, policy), (_, twin) in zip(_runs(spec, played, trunk), _runs(spec, played), strict=True):
        trunk.play(actor_for(policy, spec))
        full = Environment(spec, seed=1, stop_at_failed_stage=True)
        play_out(full, actor_for(twin, spec))
        _same(trunk.env, full, f"{name}: {label}")
        stopped += full.done_reason == "stage_failed"
    assert stopped or played.grade.score < 1.0, name  # a spec whose reference passes has probes caught by a stage


@pytest.mark.parametrize("name", ["examples/phishing_inbox_triage", "examples/hiring_loop_three_days"])
def test_forks_share_steps(name: str) -> None:
    """The probes of a realistic spec take most of their opening from the trunk, and many are not even asked for
    their turns there (their oracle starts in the reference oracle's state)."""
    spec = specs()[name]
    trunk = ReferenceTrunk.record(Environment(spec, seed=1))
    starts = []
    for _, policy in _runs(spec, outcome(trunk.env)):
        actor = actor_for(policy, spec)
        starts.append(fast_forward(trunk.recorder, trunk.trunk.stage_at, actor))
        trunk.trunk.play(actor, starts[-1])
    assert trunk.trunk.shared_steps > len(trunk.trunk.turns)
    assert sum(1 for s in starts if s > 0) >= 3


def test_snapshot_restores_after_any_episode() -> None:
    """A snapshot taken mid-episode and put back after other episodes (stages, events, writes) replays the same."""
    spec = specs()["examples/hiring_loop_three_days"]
    env = Environment(spec, seed=1)
    trunk = Trunk.record(env, actor_for(OracleTeacher(), spec))
    middle = len(trunk.turns) // 2
    expected = fingerprint(env)
    for k in (middle, 0, len(trunk.turns) - 1, middle):
        trunk.states[k].put(env)
        for turn in trunk.turns[k:]:
            env.step(turn)
        materialize_indexes(env)
        assert first_difference(fingerprint(env), expected) is None


def test_snapshot_is_not_changed_by_what_follows() -> None:
    spec = specs()["examples/ap_invoice_match_and_pay"]
    env = Environment(spec, seed=1)
    trunk = Trunk.record(env, actor_for(OracleTeacher(), spec))
    snapshot: Snapshot = trunk.states[1]
    snapshot.put(env)
    before = fingerprint(env)
    for turn in trunk.turns[1:]:
        env.step(turn)
    snapshot.put(env)
    assert first_difference(fingerprint(env), before) is None


def _turns(spec: TaskSpec, reference: list[Any]) -> st.SearchStrategy[Any]:
    """Turns an agent might take: the reference's own (out of order), calls of any exposed tool with the
    reference's arguments or none, questions, confirmations, reports, junk."""
    tools = sorted({c.name for t in reference if isinstance(t, AssistantTurn) for c in t.tool_calls} | {"nope"})
    args = [c.arguments for t in reference if isinstance(t, AssistantTurn) for c in t.tool_calls] + ["{}", "[1]"]
    call = st.builds(
        lambda i, name, a: AssistantTurn(tool_calls=[ToolCall(id=f"x{i}", name=name, arguments=a)]),
        st.integers(0, 99), st.sampled_from(tools), st.sampled_from(args),
    )  # fmt: skip
    texts = ["Could you tell me more?", "Shall I go ahead and send it?", "Done.", "", "What is the date?"]
    return st.one_of(st.sampled_from(reference or [""]), call, st.sampled_from(texts), st.just({"junk": 1}))


@cache
def _trunk(name: str) -> Trunk:
    spec = specs()[name]
    return Trunk.record(Environment(spec, seed=1), actor_for(OracleTeacher(), spec))


EXAMPLE_NAMES = [f"examples/{p.stem}" for p in sorted((ROOT / "examples").glob("*.yaml"))]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_divergence_equals_full_replay(data: st.DataObject) -> None:
    """Any prefix of the reference, then any turns: the fork and the full replay agree on everything."""
    name = data.draw(st.sampled_from(EXAMPLE_NAMES))
    trunk, spec = _trunk(name), specs()[name]
    k = data.draw(st.integers(0, len(trunk.turns)))
    rest = data.draw(st.lists(_turns(spec, trunk.turns), max_size=6))
    trunk.play(Replay([*trunk.turns[:k], *rest]))
    full = Environment(spec, seed=1)
    play_out(full, Replay([*trunk.turns[:k], *rest]))
    _same(trunk.env, full, f"{name}: prefix {k}, then {rest}")


class _FailsAt:
    """The stage's reference run, raising at its n-th turn (a crashing backend)."""

    name = "fails"

    def __init__(self, run: Any, n: int) -> None:
        self.run, self.n = run, n

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        self.n -= 1
        if self.n < 0:
            raise RuntimeError("backend down")
        return self.run.act(messages, tools)


@pytest.mark.parametrize("fail_in", [0, 1])
def test_trunk_whose_policy_failed_forks_as_full_replay(fail_in: int) -> None:
    """A trunk ended by its policy's error: a run that plays that policy in the failing stage fails the same way,
    one that plays its own policy there goes on (the fork must not mistake one for the other)."""
    spec = specs()["examples/hiring_loop_three_days"]

    def runs(own: bool) -> list[Any]:
        out: list[Any] = [stage_oracle(spec, i) for i in range(stage_count(spec))]
        if not own:
            out[fail_in] = _FailsAt(out[fail_in], 2)
        return out

    trunk = Trunk.record(Environment(spec, seed=1), StagedRun(runs(False)))
    assert trunk.error is not None
    for own in (False, True):
        for follows in (0, 1, 2):
            if own and follows > fail_in:
                continue  # its own policy in the failing stage: it does not follow the trunk there
            error = trunk.play(AfterReference(runs(own), follows))
            full = Environment(spec, seed=1)
            assert error == play_out(full, StagedRun(runs(own)))
            _same(trunk.env, full, f"own policy {own}, follows {follows}: {error}")


def test_fast_forward_only_for_an_oracle_that_starts_as_the_trunks() -> None:
    """An oracle whose user answers differently, or which already knows a fact, is asked for every turn."""
    spec = specs()["examples/roadmap_sync_clarify_attendee"]
    trunk = ReferenceTrunk.record(Environment(spec, seed=1))
    edited = [*spec.reference[:-1]]  # shares all but the report
    assert fast_forward(trunk.recorder, trunk.trunk.stage_at, scripted(spec, edited)) > 0
    fact = spec.user.hidden_facts[0]
    other_user = spec.user.model_copy(update={"hidden_facts": [fact.model_copy(update={"reply": "Someone else."})]})
    stranger = OracleRun(spec.model_copy(update={"reference": edited, "user": other_user}))
    assert fast_forward(trunk.recorder, trunk.trunk.stage_at, stranger) == 0
    assert fast_forward(trunk.recorder, trunk.trunk.stage_at, scripted(spec, edited, {fact.slot: "x"})) == 0
