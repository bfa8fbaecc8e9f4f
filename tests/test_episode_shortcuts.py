"""The episode's shortcuts, each attacked: the oracle's compiled templates and unvalidated turns, grades and
trajectories built without validation, the state hash folding a record once,
and pool workers inheriting the driver's validated specs. Each is compared with the slow path it replaces, on
the examples (stages, events, faults, limits) and on hostile values that must send it back to that path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from coworkenv.agents import OracleTeacher
from coworkenv.agents.oracle import OracleRun, compiled, is_transient, turn
from coworkenv.bank.sources import load_specs
from coworkenv.expr import render
from coworkenv.rollout import rollout_bank, worker
from coworkenv.rollout.worker import EpisodeTask
from coworkenv.runtime import Environment, run_episode
from coworkenv.runtime.digest import full_digest
from coworkenv.runtime.turn import AssistantTurn
from coworkenv.spec.models import TaskSpec
from coworkenv.trajectory import Grade, Trajectory
from rollout_specs import mail_reply_spec

EXAMPLES = load_specs(Path(__file__).parent.parent / "examples")
TRANSIENT_MARKERS = ("503", "temporar", "retry", "timeout", "unavailable")


def _played(spec: TaskSpec, **env: Any) -> tuple[Environment, Trajectory]:
    environment = Environment(spec, **env)
    return environment, run_episode(environment, OracleTeacher())


# --- the oracle ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "plain text",
        "${r1.items[0].id}",
        "Dear ${facts.name}, the total is ${r1.total}.",
        {"to": ["${facts.email}", "x@y.z"], "n": 3, "nested": {"k": "${r1.total}", "none": None}},
        ["${r1.total}", 2.5, True, "${missing.key}"],
        "${ broken syntax",
    ],
)
def test_compiled_templates_render_as_render_does(template: Any) -> None:
    ctx = {"facts": {"name": "Ana", "email": "ana@x.io"}, "r1": {"items": [{"id": "a1"}], "total": 12.0}}
    try:
        expected: Any = render(template, ctx)
    except Exception as exc:  # the same error, raised at the same reference
        with pytest.raises(type(exc), match=str(exc)[:40].replace("(", r"\(").replace("[", r"\[")):
            compiled(template)(ctx)
        return
    got = compiled(template)(ctx)
    assert got == expected and type(got) is type(expected)
    if isinstance(template, dict | list):
        assert compiled(template)(ctx) is not got  # a fresh container each time: no shared arguments


def test_the_template_cache_tells_equal_templates_apart_by_object() -> None:
    first, second = {"a": "${x}"}, {"a": "${x}"}
    assert compiled(first) is compiled(first)
    assert compiled(second) is not compiled(first)


def test_a_retry_hands_over_its_own_copy_of_the_arguments() -> None:
    spec = mail_reply_spec(0)
    run = OracleRun(spec)
    first = run.act([], [])
    assert first.tool_calls
    call = first.tool_calls[0]
    error = {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": '{"error": "503 unavailable"}'}
    retry = run.act([error], [])
    assert retry.tool_calls[0].arguments == call.arguments
    assert retry.tool_calls[0].arguments is not call.arguments


def test_text_that_is_not_a_string_is_still_rejected() -> None:
    with pytest.raises(ValidationError):
        turn(42)
    assert turn("ok") == AssistantTurn(content="ok")


@pytest.mark.parametrize(
    "content",
    [
        '{"error": "503 Service Unavailable"}',
        '{"ERROR": "Temporarily down"}',
        '{"Error": "please RETRY"}',
        '{"error": "not found"}',
        '{"errors": "timeout"}',
        ' {"error": "timeout"}',
        '{"\u0130rror": "timeout"}',  # İ lower-cases to two characters
        '{"e\u212arror": "timeout"}',  # the Kelvin sign lower-cases to ASCII k
        '{"error"',
        "",
        "503 retry later",
        '{"result": "temporarily unavailable"}',
    ],
)
def test_transient_errors_are_what_the_whole_lower_cased_text_says(content: str) -> None:
    low = content.lower()
    assert is_transient(content) == (low.startswith('{"error"') and any(m in low for m in TRANSIENT_MARKERS))


def test_stage_views_are_kept_per_spec_object() -> None:
    staged = [s for s in EXAMPLES if s.stages]
    teacher = OracleTeacher()
    first = teacher.for_task(staged[0])
    again = teacher.for_task(staged[0])
    other = teacher.for_task(staged[1])
    assert [r.spec for r in first.runs] == [r.spec for r in again.runs]  # type: ignore[union-attr]
    assert [r.spec.id for r in other.runs] == [staged[1].id] * len(other.runs)  # type: ignore[union-attr]
    assert other.runs[0].spec.reference == staged[1].reference  # type: ignore[union-attr]


# --- grades and trajectories built without validation --------------------------------------------------------


def test_check_results_and_grades_equal_validated_ones_on_every_example() -> None:
    for spec in EXAMPLES:
        for fault_rate, max_turns in ((0.0, None), (0.5, 3)):
            _, traj = _played(spec, fault_rate=fault_rate, max_turns=max_turns, seed=3)
            grade = traj.grade
            assert grade is not None
            assert grade == Grade.model_validate(grade.model_dump()), spec.id
            assert traj == Trajectory.model_validate(traj.model_dump()), spec.id
            assert traj.model_fields_set == set(Trajectory.model_fields)


# --- the state hash and the pool's inherited specs ----------------------------------------------------------------


def test_a_record_written_many_times_is_hashed_once_and_right() -> None:
    env = Environment(EXAMPLES[0])
    env.reset()
    digest = env.workspace._digest
    folded: list[Any] = []
    original = digest.update

    def spy(state: Any, keys: Any) -> None:
        keys = list(keys)
        folded.append(keys)
        original(state, keys)

    digest.update = spy  # type: ignore[method-assign]
    service, collection = next((s, c) for s, colls in env.workspace.state.items() for c, recs in colls.items() if recs)
    rid = next(iter(env.workspace.state[service][collection]))
    svc = env.workspace.services[service]
    for i in range(3):
        svc.store(collection, rid, {**env.workspace.state[service][collection][rid], "x": i})
    assert env.workspace.state_hash() == full_digest(env.workspace.state)
    assert len(folded[-1]) == 3  # the change log keeps every write; the digest folds the record once
    svc.store(collection, rid, env.workspace.initial[service][collection][rid])
    assert env.workspace.state_hash() == full_digest(env.workspace.state) == full_digest(env.workspace.initial)


def test_forked_workers_inherit_validated_specs_and_play_the_same_lines(tmp_path: Path) -> None:
    specs = [mail_reply_spec(i) for i in range(3)]
    broken = mail_reply_spec(9).model_dump(mode="json")
    inline = rollout_bank(specs, "oracle", 4, tmp_path / "a", progress=False)
    pooled = rollout_bank(specs, "oracle", 4, tmp_path / "b", workers=2, chunk_size=3, progress=False)
    lines = [[_untimed(x) for x in (tmp_path / run / "episodes.jsonl").read_text().splitlines()] for run in "ab"]
    assert lines[0] == lines[1] and inline.counts == pooled.counts
    assert not worker._SPECS.entries  # the driver let go of what it prepared for the fork
    worker.prepare_for_fork([EpisodeTask({**broken, "checks": "not a list"}, 0, 0)], worker.RunOptions())
    assert not worker._SPECS.entries  # a spec that fails is left to the worker, which records it


def _untimed(line: str) -> str:
    data = json.loads(line)
    data["seconds"] = data["trajectory"]["seconds"] = None
    return json.dumps(data, sort_keys=True)
