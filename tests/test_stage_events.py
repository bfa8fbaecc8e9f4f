"""Events and faults of one stage: they happen only during that stage, counted from its start, and the
verifier judges them where they are declared (templates, records, tools, pacing, whether they fire)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from coworkenv.agents import OracleTeacher
from coworkenv.runtime import Environment, run_episode
from coworkenv.runtime.events import EventScheduler
from coworkenv.spec import Event, SpecError, spec_from_data
from coworkenv.verify import static_findings, verify
from coworkenv.verify.admission import _pacing_variants, play
from minispec import call, say

EXAMPLE = Path(__file__).parent.parent / "examples" / "printer_fix_followup_two_days.yaml"
DATA: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
FIX = "cm-fac-fix"
ASK = call("chat_post_message", {"channel": "facilities", "text": "Is the 4th-floor printer fixed?"}, "c1")
LOOK = call("tickets_search", {"team": "facilities"}, "c2")
DAY_ONE = [
    call("chat_post_message", {"channel": "facilities", "text": "The 4th-floor printer keeps jamming."}, "c1"),
    call("tickets_create", {"title": "4th-floor printer jams", "team": "facilities", "description": "Jams."}, "c2"),
]


def _data() -> dict[str, Any]:
    return copy.deepcopy(DATA)


def _stage_event(d: dict[str, Any]) -> dict[str, Any]:
    event: dict[str, Any] = d["stages"][0]["events"][0]
    return event


def _posted(env: Environment) -> bool:
    return FIX in env.workspace.records("chat", "messages")


def _through_day_one(env: Environment, extra_looks: int = 3) -> None:
    """Day one's post and ticket, then some looks around (steps in which a misplaced event would fire)."""
    env.reset()
    for turn in [*DAY_ONE, *[LOOK] * extra_looks]:
        env.step(turn)
    assert env.stages is not None and env.stages.index == 0


def test_a_stage_event_never_fires_in_an_earlier_stage() -> None:
    env = Environment(spec_from_data(_data()))
    _through_day_one(env)
    assert "facilities-answer" not in env.fired and not _posted(env)
    opened = env.step(say("Done: I told Facilities and opened the ticket."))
    assert opened.info.get("stage") == 1
    env.step(ASK)
    assert not _posted(env)  # after: 1, one step after its trigger
    env.step(LOOK)
    assert "facilities-answer" in env.fired and _posted(env)


def test_the_same_event_at_spec_level_fires_on_day_one() -> None:
    """The control: moved to the spec's own events, the first post in #facilities (day one) triggers it."""
    d = _data()
    d["events"] = d["stages"][0].pop("events")
    env = Environment(spec_from_data(d))
    _through_day_one(env)
    assert "facilities-answer" in env.fired and _posted(env)


def _timed(after_step: int) -> dict[str, Any]:
    """The example with Facilities' reply timed ``after_step`` steps into day two instead of on the agent's post."""
    d = _data()
    event = _stage_event(d)
    for key in ("on_tool", "when", "after"):
        event.pop(key)
    event.update(after_step=after_step, notify="New message from mo.ellis@northwind.io in #facilities.")
    event["mutations"][0]["record"]["channel"] = "facilities"
    return d


def test_a_stage_events_after_step_counts_from_the_stage_start() -> None:
    env = Environment(spec_from_data(_timed(2)))
    _through_day_one(env, extra_looks=3)  # steps 1-5: an absolute after_step 2 would have fired here
    assert not _posted(env)
    env.step(say("Done."))  # step 6 ends day one; day two starts after it
    env.step(LOOK)
    assert not _posted(env)
    env.step(LOOK)
    assert _posted(env) and env.steps[-1].events == ["facilities-answer"]


def test_a_stage_fault_counts_the_calls_of_its_own_stage() -> None:
    d = _data()
    d["stages"][0]["faults"] = [{"tool": "chat_post_message", "on_call": 1}]
    env = Environment(spec_from_data(d))
    _through_day_one(env, extra_looks=0)
    assert not any(c.fault for c in env.log.calls)  # day one's post is the tool's first call, but not the stage's
    env.step(say("Done."))
    env.step(ASK)
    assert env.log.calls[-1].fault and not env.log.calls[-1].ok
    env.step(ASK)
    assert env.log.calls[-1].ok


def test_a_delayed_firing_lapses_when_its_stage_ends() -> None:
    late = Event(
        id="late", on_tool="x_do", after=5, mutations=[{"service": "s", "collection": "c", "op": "delete", "id": "r"}]
    )
    scheduler = EventScheduler([], [[late], []])
    scheduler.begin_stage(1, 0)
    assert scheduler.on_call("x_do", {}, 1) == []
    scheduler.begin_stage(2, 3)
    assert [scheduler.at_step(step) for step in range(3, 12)] == [[]] * 9
    assert "late" not in scheduler.fired


def test_the_oracle_passes_and_runs_are_identical() -> None:
    spec = spec_from_data(_data())
    first, second = (run_episode(Environment(spec, seed=s), OracleTeacher()) for s in (0, 1))
    assert first.grade.score == 1.0 and [g.score for g in first.grade.stages or []] == [1.0, 1.0]
    assert first.final_state_hash == second.final_state_hash
    assert first.messages == second.messages and [s.events for s in first.steps] == [s.events for s in second.steps]


# --- validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: _stage_event(d).update(bogus=1), "stages[0].events[0].bogus: Extra inputs are not permitted"),
        (lambda d: d["stages"][0].update(faults=[{"tool": "chat_post_message", "on_cal": 1}]), "stages[0].faults[0]"),
        (lambda d: d.update(events=[_stage_event(d)]), "duplicate ids in events: ['facilities-answer']"),
        (lambda d: _stage_event(d).pop("on_tool"), "stages[0].events[0]: Value error, give exactly one trigger"),
    ],
)
def test_a_malformed_stage_event_is_refused_with_its_field(change: Any, problem: str) -> None:
    d = _data()
    change(d)
    with pytest.raises(SpecError) as err:
        spec_from_data(d, "day2.yaml")
    assert "day2.yaml" in str(err.value) and problem in str(err.value)


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: _stage_event(d).update(on_tool="chat_post"), "stages[0].events[0].on_tool"),
        (lambda d: d["stages"][0].update(faults=[{"tool": "chat_shout"}]), "stages[0].faults[0].tool"),
        (lambda d: _stage_event(d).update(when="args.room == 'facilities'"), "stages[0].events[0].when"),
        (lambda d: _stage_event(d)["mutations"][0]["record"].update(channel="${args.room}"), "stages[0].events[0]"),
        (
            lambda d: _stage_event(d)["mutations"].append(
                {"service": "chat", "collection": "chats", "op": "insert", "record": {"id": "x"}}
            ),
            "stages[0].events[0].mutations[1]",
        ),
    ],
)
def test_a_stage_event_naming_what_does_not_exist_is_rejected_where_it_is(change: Any, where: str) -> None:
    d = _data()
    change(d)
    found = static_findings(spec_from_data(d))
    assert any(f.kind == "unresolved_reference" and f.where.startswith(where) for f in found), [f.line() for f in found]


# --- the dynamic checks -------------------------------------------------------------------------


def test_a_stage_event_the_reference_never_triggers_is_rejected() -> None:
    d = _data()
    _stage_event(d)["when"] = "args.channel == 'general'"
    report = verify(spec_from_data(d))
    assert any(f.kind == "nondeterministic" and f.where == "stages[0].events[0]" for f in report.findings)


def test_pacing_probes_run_around_a_stage_event_counted_from_its_stage() -> None:
    spec = spec_from_data(_data())
    reference = play(Environment(spec), OracleTeacher())
    names = [name for name, _ in _pacing_variants(spec, reference)]
    assert "pacing[events[0].before]@stage2" in names and "pacing[events[0].after]@stage2" in names


def test_a_stage_event_whose_grade_depends_on_pacing_is_rejected() -> None:
    """Timed two steps into day two, the reply lands after a faster agent has already looked for it."""
    report = verify(spec_from_data(_timed(2)))
    assert any(f.kind == "nondeterministic" and f.where == "stages[0].events[0]" for f in report.findings), [
        f.line() for f in report.findings
    ]
