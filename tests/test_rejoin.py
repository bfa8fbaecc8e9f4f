"""A multi-stage probe run that rejoins the reference at a stage's start gets exactly the outcome playing on gives.

Every probe and pacing run the verifier makes of every multi-stage example, broken spec and
blueprint spec (two seeds) is played twice: as the verifier plays it (its later stages taken
from the reference run where it rejoins it) and in a fresh environment to its end; the
outcomes must be equal in every field, and the verifier's reports equal those it gives
without the shortcut. Then each piece of state the rejoin compares is changed on its own, and
the run must no longer count as rejoined; and a probe that reaches the reference's records at
a stage's start, but made a call a later rule reads differently, is played to its end.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from coworkenv.agents.oracle import OracleRun, stage_oracle
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.episode import play_out
from coworkenv.runtime.fork import Snapshot
from coworkenv.runtime.policy import actor_for
from coworkenv.spec import TaskSpec, load_spec
from coworkenv.spec.models import AnswerStep, CallStep, Rule
from coworkenv.spec.stages import stage_views
from coworkenv.synth.blueprints import BLUEPRINTS
from coworkenv.synth.composer import compose, plan
from coworkenv.verify.admission import Played, _pacing_variants, joined, outcome, verify
from coworkenv.verify.fast_forward import ReferenceTrunk
from coworkenv.verify.probes import PROBES
from coworkenv.verify.rejoin import Rejoin, same, same_future
from coworkenv.verify.stage_probes import AfterReference, staged_variants

ROOT = Path(__file__).parent.parent
FILES = ("examples", "broken_specs")


@cache
def staged_specs() -> dict[str, TaskSpec]:
    found: dict[str, TaskSpec] = {}
    for path in sorted((ROOT / "examples").glob("*.yaml")) + sorted((ROOT / "tests/broken_specs").glob("*.yaml")):
        try:
            spec = load_spec(path)
            Environment(spec)
        except Exception:  # a broken spec that does not load has no episode
            continue
        if spec.stages:
            found[f"{path.parent.name}/{path.stem}"] = spec
    for seed in (0, 1):
        for i, name in enumerate(BLUEPRINTS):
            spec = compose(plan(seed, i, [name]))
            if spec.stages:
                found[f"{name}/{seed}"] = spec
    return found


def _trunk(spec: TaskSpec) -> tuple[ReferenceTrunk, Played]:
    trunk = ReferenceTrunk.record(Environment(spec, seed=1))
    reference = outcome(trunk.env)
    trunk.rejoin = Rejoin.of(trunk.trunk, reference)
    return trunk, reference


def _runs(spec: TaskSpec, reference: Played, trunk: ReferenceTrunk | None = None) -> list[tuple[str, Any]]:
    runs = [(name, policy) for _, name, policy in staged_variants(spec, PROBES.values(), trunk)]
    return runs + _pacing_variants(spec, reference)


def _full(spec: TaskSpec, policy: Any) -> Played:
    env = Environment(spec, seed=1)
    play_out(env, actor_for(policy, spec))
    return outcome(env)


def _fast(trunk: ReferenceTrunk, policy: Any) -> tuple[Played, bool]:
    """The run as the verifier plays it, and whether it rejoined the reference."""
    future = trunk.play_joining(actor_for(policy, trunk.env.spec))
    return (outcome(trunk.env) if future is None else joined(trunk.env, future)), future is not None


def _rejoined_runs(name: str) -> list[str]:
    """Every run of spec ``name`` as the verifier plays it equals a full play; the runs that rejoined."""
    spec = staged_specs()[name]
    trunk, reference = _trunk(spec)
    out = []
    for (label, policy), (_, twin) in zip(_runs(spec, reference, trunk), _runs(spec, reference), strict=True):
        fast, rejoined = _fast(trunk, policy)
        assert fast == _full(spec, twin), f"{name}: {label}"
        if rejoined:
            out.append(label)
    return out


@pytest.mark.parametrize("name", sorted(staged_specs()))
def test_a_run_that_rejoins_the_reference_gets_the_outcome_playing_on_gives(name: str) -> None:
    _rejoined_runs(name)


def test_runs_that_change_only_what_no_later_stage_reads_rejoin() -> None:
    """A first-day report (a dump of every value, a bare "Done") changes nothing a later day reads: those runs take
    their later days from the reference; a first-day collateral write does not."""
    rejoined = _rejoined_runs("month_end_close/0")
    assert {"report_dump@stage1", "vague_answer@stage1"} <= set(rejoined)
    assert not any(label.startswith(("collateral_write", "duplicate_write")) for label in rejoined)


@pytest.mark.parametrize("name", sorted(n for n in staged_specs() if "/" in n and n.split("/")[0] in FILES))
def test_the_verifiers_report_is_the_one_it_gives_playing_every_run_out(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = staged_specs()[name]
    fast = verify(spec)
    monkeypatch.setattr(Rejoin, "stop", lambda self, actor: None)
    assert verify(spec).model_dump() == fast.model_dump()


def _at_stage_start() -> tuple[Environment, Snapshot]:
    """An environment where the reference began its second day, and the trunk's state there."""
    trunk, _ = _trunk(staged_specs()["month_end_close/0"])
    assert trunk.rejoin is not None
    state = trunk.rejoin.states[min(trunk.rejoin.states)][0]
    state.put(trunk.env)
    return trunk.env, state


def _table(env: Environment) -> tuple[str, str, dict[str, Any]]:
    """A collection of at least two records."""
    return next((s, c, t) for s, cs in env.workspace.state.items() for c, t in cs.items() if len(t) >= 2)


def _store_first(env: Environment, update: dict[str, Any]) -> None:
    service, collection, table = _table(env)
    rid, rec = next(iter(table.items()))
    env.workspace.services[service].store(collection, rid, {**rec, **update})


def _first_to_last(env: Environment) -> None:
    service, collection, table = _table(env)
    rid, rec = next(iter(table.items()))
    env.workspace.services[service].store(collection, rid, None)
    env.workspace.services[service].store(collection, rid, rec)  # the same records, in another order


def _call(env: Environment, **update: Any) -> None:
    env.log.calls[-1] = env.log.calls[-1].model_copy(update=update)  # the record itself is the snapshot's too


def _start(env: Environment) -> None:
    assert env.stages is not None and env.stages.start is not None
    service, collection, table = _table(env)
    start = {s: dict(cs) for s, cs in env.stages.start.items()}
    rid, rec = next(iter(table.items()))
    start[service] = {**start[service], collection: {**start[service][collection], rid: {**rec, "x_flag": 1}}}
    env.stages.start = start


CHANGES: dict[str, Callable[[Environment], None]] = {
    "a step more": lambda env: env._steps.append(env.steps[-1]),
    "a tool count": lambda env: env.tool_counts.update({"x_tool": 1}),
    "confirmed": lambda env: setattr(env, "confirmed", not env.confirmed),
    "a call's arguments": lambda env: _call(env, args={**(env.log.calls[-1].args or {}), "x": 1}),
    "a call's tool": lambda env: _call(env, tool="x_tool"),
    "a call's success": lambda env: _call(env, ok=not env.log.calls[-1].ok),
    "a call fewer": lambda env: env.log.calls.pop(),
    "a revealed fact": lambda env: env.user.revealed.add("x_slot"),
    "the next follow-up": lambda env: setattr(env.user, "next_follow_up", env.user.next_follow_up + 1),
    "a fired event": lambda env: env.scheduler.fired.add("x_event"),
    "an armed event": lambda env: env.scheduler.armed.add("x_event"),
    "the stage offset": lambda env: setattr(env.scheduler, "offset", env.scheduler.offset + 1),
    "the stage's calls": lambda env: env.stages.calls.update({"x_tool": 1}),  # type: ignore[union-attr]
    "the stage's first step": lambda env: setattr(env.stages, "first_step", 0),
    "a record's field": lambda env: _store_first(env, {"x_flag": 1}),
    "a record's order": _first_to_last,
    "the stage's start": _start,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_any_difference_in_what_the_rest_reads_is_not_a_rejoin(change: str) -> None:
    env, state = _at_stage_start()
    assert same_future(env, state)
    CHANGES[change](env)
    assert not same_future(env, state), change


def test_a_record_holding_1_where_the_other_holds_true_is_not_the_same_state() -> None:
    env, _ = _at_stage_start()
    _store_first(env, {"x_flag": True})
    state = Snapshot.of(env)
    _store_first(env, {"x_flag": 1})  # equal by ==, yet a tool prints 1, not true
    assert not same_future(env, state)


def test_a_draw_from_the_generator_is_not_the_same_state() -> None:
    env, _ = _at_stage_start()
    env.fault_rate = 0.5  # the generator is compared where faults are drawn from it
    state = Snapshot.of(env)
    assert same_future(env, state)
    env.rng.random()
    assert not same_future(env, state)


def test_same_tells_apart_what_equality_does_not() -> None:
    assert same({"a": 1, "b": [1.0, "x"]}, {"a": 1, "b": [1.0, "x"]})
    assert not same({"a": 1}, {"a": True})
    assert not same({"a": 1}, {"a": 1.0})
    assert not same([0.0], [-0.0])
    assert not same({"a": 1, "b": 2}, {"b": 2, "a": 1})  # the order a tool lists
    assert not same({1}, {True})


def _second_day(spec: TaskSpec, query: str, report: str | None = None) -> AfterReference:
    """The reference, but its second day's first search asks for ``query`` (the same messages, another call) and,
    given ``report``, its second day's report says that."""
    views = stage_views(spec)
    runs: list[Any] = [stage_oracle(spec, i, view) for i, view in enumerate(views)]
    steps = list(views[1].reference)
    first = steps[0]
    assert isinstance(first, CallStep) and first.call == "mail_search"
    steps[0] = first.model_copy(update={"args": {**first.args, "query": query}})
    if report is not None:
        steps[-1] = AnswerStep(answer=report)
    runs[1] = OracleRun(views[1].model_copy(update={"reference": steps}), call_prefix="call_s2_")
    return AfterReference(runs, 1)


def test_a_probe_whose_calls_a_later_rule_reads_differently_is_played_on() -> None:
    """On the second day the run searches "priya" where the reference searched "Priya": the same messages, so the
    same records when the third day begins. A third-day rule requires a search for "priya" before the feedback
    is logged: the reference breaks it, the run does not. Taking the reference's third day would give the run the
    reference's violation; the run is played on instead, and gets a full play's outcome. A run that differs from
    the reference only in its second-day report takes the third day from the reference, violation and all."""
    spec = staged_specs()["examples/hiring_loop_three_days"]
    rule = Rule(id="search_first", description="search first", tool="documents_append", rule="require_prior",
                prior_tool="mail_search", prior_when="prior.query == 'priya'")  # fmt: skip
    ruled = spec.model_copy(update={"rules": [rule]})
    trunk, reference = _trunk(ruled)
    assert [v.policy for v in reference.grade.violations] == ["search_first"]
    fast, rejoined = _fast(trunk, _second_day(ruled, "priya"))
    assert not rejoined
    assert fast == _full(ruled, _second_day(ruled, "priya"))
    assert not fast.grade.violations
    fast, rejoined = _fast(trunk, _second_day(ruled, "Priya", "Done."))
    assert rejoined
    assert fast == _full(ruled, _second_day(ruled, "Priya", "Done."))
    assert [v.policy for v in fast.grade.violations] == ["search_first"]
