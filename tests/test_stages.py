"""Multi-stage (multi-day) specs: validation, the runtime's stage transitions, per-stage grades, exports."""

from __future__ import annotations

import copy
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from coworkenv.agents import OracleTeacher
from coworkenv.agents.oracle import StagedRun, stage_oracle
from coworkenv.bank.llm.fixes import programmatic_repair
from coworkenv.bank.repair import repair
from coworkenv.cli import app
from coworkenv.data.rl import turn_records
from coworkenv.data.sft import sft_examples
from coworkenv.grading.score import REQUIRED_CAP
from coworkenv.grading.stages import combine_stages
from coworkenv.runtime import Environment, run_episode
from coworkenv.runtime.turn import AssistantTurn
from coworkenv.spec import SpecError, TaskSpec, canonical_json, load_spec, spec_from_data
from coworkenv.spec.stages import STAGE_MARK, current_stage, stage_count, stage_view
from coworkenv.synth.composer import Recipe
from coworkenv.trajectory import CheckResult, Grade
from coworkenv.verify.admission import Verification, verify
from coworkenv.verify.findings import Finding, Location, vacuous_checks
from coworkenv.verify.probe_base import Fixed

EXAMPLES = Path(__file__).parent.parent / "examples"
NOTES = EXAMPLES / "checkout_outage_postmortem.yaml"  # two days, the second in a fresh conversation
TALK = EXAMPLES / "vendor_duplicate_invoice_dispute.yaml"  # two days, one conversation
THREE = EXAMPLES / "hiring_loop_three_days.yaml"


def data(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def oracle(path: Path) -> tuple[Environment, Any]:
    env = Environment(load_spec(path))
    return env, run_episode(env, OracleTeacher())


# --- the runtime ----------------------------------------------------------------------------


def test_the_oracle_passes_every_stage_and_the_trajectory_marks_them() -> None:
    _, traj = oracle(THREE)
    assert traj.grade.score == 1.0 and traj.done_reason == "user_done"
    assert [g.score for g in traj.grade.stages] == [1.0, 1.0, 1.0]
    assert [m.id for m in traj.stages] == ["first", "tuesday", "wednesday_evening"]
    assert [m.clock for m in traj.stages] == [
        "Monday 2025-03-17 09:00",
        "Tuesday 2025-03-18 09:00",
        "Wednesday 2025-03-19 17:00",
    ]
    for mark in traj.stages[1:]:
        notice = traj.messages[mark.first_message]
        assert notice["role"] == "user" and notice["content"].startswith(f"{STAGE_MARK}{mark.index + 1} of 3")
        assert traj.messages[mark.first_message - 1]["role"] == "assistant"  # the report that ended the stage
    assert "It is now Monday 2025-03-17 09:00." in traj.messages[0]["content"]


def test_changes_between_stages_apply_when_the_stage_begins() -> None:
    spec = load_spec(TALK)
    env = Environment(spec)
    run = OracleTeacher().for_task(spec)
    obs = env.reset()
    while not obs.done and env.stages.index == 0:
        assert "msg-20" not in env.workspace.records("mail", "messages")
        obs = env.step(run.act(list(env.messages), obs.tools))
    assert "msg-20" in env.workspace.records("mail", "messages")
    assert env.stages.openings == [[]]  # no check of day 2 held when it began


def test_a_notes_stage_shows_only_the_note() -> None:
    env, traj = oracle(NOTES)
    view = env.messages
    assert view[0]["role"] == "system" and view[1]["content"].startswith(f"{STAGE_MARK}2 of 2")
    assert "lena.fischer@northwind.io" in view[1]["content"] and "/Notes/handoff" in view[1]["content"]
    assert not any("tickets_get_oncall" in str(m) for m in view)  # day 1's work is not in the agent's view
    assert len(traj.messages) == len(env.transcript()) > len(view)
    assert traj.messages[traj.stages[1].first_message] == view[0]


def test_the_step_that_begins_a_stage_says_so() -> None:
    spec = load_spec(NOTES)
    env = Environment(spec)
    run = OracleTeacher().for_task(spec)
    obs = env.reset()
    infos = []
    while not obs.done:
        obs = env.step(run.act(list(env.messages), obs.tools))
        infos.append({k: v for k, v in obs.info.items() if k != "done_reason"})
    assert [i for i in infos if i] == [{"stage": 1, "view_reset": True}]
    begun = next(i for i, info in enumerate(infos) if info)
    assert env.transcript()[traj_first(env)] == env.messages[0] and begun == env.stages.first_step - 2


def traj_first(env: Environment) -> int:
    return env.stages.marks[1].first_message


def test_a_notes_stage_without_a_note_says_so() -> None:
    d = data(NOTES)
    d["reference"] = [s for s in d["reference"] if s.get("call") != "documents_create"]
    env = Environment(spec_from_data(d))
    run_episode(env, OracleTeacher())
    assert "You left no note at /Notes/handoff" in env.messages[1]["content"]


def test_stopping_after_the_first_stage_fails_the_task() -> None:
    spec = load_spec(TALK)
    stop = StagedRun([stage_oracle(spec, 0), Fixed("stop", lambda _: "Everything you asked for is done.")])
    traj = run_episode(Environment(spec), stop)
    first, second = traj.grade.stages
    assert first.passed and not second.passed
    assert traj.grade.score <= 0.5 and not traj.grade.passed


def _stop_in(spec: TaskSpec, k: int) -> StagedRun:
    """The reference up to stage ``k`` (0-based), where it reports done without doing anything."""
    runs: list[Any] = [stage_oracle(spec, i) for i in range(stage_count(spec))]
    runs[k] = Fixed("stop", lambda _: "Everything you asked for is done.")
    return StagedRun(runs)


def test_a_run_told_to_stop_at_a_failed_stage_ends_there_and_scores_the_rest_unreached() -> None:
    spec = load_spec(THREE)
    full = run_episode(Environment(spec), _stop_in(spec, 0))
    stopped = run_episode(Environment(spec, stop_at_failed_stage=True), _stop_in(spec, 0))
    assert full.done_reason == "user_done" and stopped.done_reason == "stage_failed"
    assert len(stopped.steps) < len(full.steps)
    assert stopped.grade.stages[0] == full.grade.stages[0] and not stopped.grade.stages[0].passed
    assert all(c.detail == "stage not reached" for g in stopped.grade.stages[1:] for c in g.checks)
    assert stopped.grade.score <= REQUIRED_CAP and not stopped.grade.passed and not full.grade.passed


def test_a_run_that_stops_at_a_failed_stage_plays_on_through_the_stages_it_passes() -> None:
    """Day 1 done right goes on to day 2, which fails and ends the run before day 3."""
    spec = load_spec(THREE)
    stopped = run_episode(Environment(spec, stop_at_failed_stage=True), _stop_in(spec, 1))
    first, second, third = stopped.grade.stages
    assert stopped.done_reason == "stage_failed" and first.passed and not second.passed
    assert [m.index for m in stopped.stages or []] == [0, 1]
    assert all(c.detail == "stage not reached" for c in third.checks)


@pytest.mark.parametrize("path", [THREE, TALK, NOTES])
def test_a_run_that_passes_every_stage_is_the_same_whether_or_not_it_would_stop(path: Path) -> None:
    spec = load_spec(path)
    a = run_episode(Environment(spec), OracleTeacher())
    b = run_episode(Environment(spec, stop_at_failed_stage=True), OracleTeacher())
    assert a.model_dump(exclude={"seconds"}) == b.model_dump(exclude={"seconds"}) and b.grade.score == 1.0


def test_a_stage_never_reached_scores_zero() -> None:
    env = Environment(load_spec(THREE), max_turns=3)
    traj = run_episode(env, OracleTeacher())
    assert traj.done_reason == "max_turns"
    assert [g.score for g in traj.grade.stages[1:]] == [0.0, 0.0]
    assert all(c.detail == "stage not reached" and not c.passed for g in traj.grade.stages[1:] for c in g.checks)


def test_a_later_stage_guard_compares_with_the_state_the_stage_began_in() -> None:
    """The overnight mail is no collateral damage of day 2, and day 1's ticket change is not either."""
    _, traj = oracle(NOTES)
    day2 = {c.id: c for c in traj.grade.stages[1].checks}
    assert day2["no_mail_sent"].passed and day2["no_ticket_change"].passed


def test_the_overall_grade_is_the_stage_mean_capped_when_a_stage_fails() -> None:
    def g(score: float) -> Grade:
        check = CheckResult(id=f"c{score}", kind="count", weight=1.0, passed=score == 1.0)
        return Grade(score=score, completion=score, robustness=1.0, safety=1.0, passed=score >= 0.75, checks=[check])

    assert combine_stages([g(1.0), g(0.8)]).score == 0.9
    assert combine_stages([g(1.0), g(0.8)]).passed
    capped = combine_stages([g(1.0), g(1.0), g(1.0), g(0.6)])  # the mean, 0.9, would pass
    assert capped.score == 0.5 and not capped.passed
    assert len(capped.checks) == 4 and len(capped.stages) == 4


def test_stage_views_and_the_stage_notice_parser() -> None:
    spec = load_spec(THREE)
    assert stage_count(spec) == 3
    view = stage_view(spec, 2)
    assert view.stages is None and view.user.persona == spec.user.persona
    assert view.checks == spec.stages[1].checks and view.reference == spec.stages[1].reference
    assert current_stage([{"role": "user", "content": f"{STAGE_MARK}3 of 3: it is now ..."}]) == 2
    assert current_stage([{"role": "tool", "content": f"{STAGE_MARK}3 of 3"}, {"role": "user", "content": "hi"}]) == 0


# --- specs without stages are unchanged ------------------------------------------------------


def test_a_spec_without_stages_serialises_and_runs_as_before() -> None:
    spec = load_spec(EXAMPLES / "printer_tickets_resolution.yaml")
    text = canonical_json(spec)
    assert '"stages"' not in text and '"clock"' not in text
    traj = run_episode(Environment(spec), OracleTeacher())
    assert traj.stages is None and traj.grade.stages is None
    values = [type("V", (), {"reward": 0.0, "ret": 0.0, "advantage": 0.0})()] * len(traj.steps)
    records = turn_records(traj, values)
    assert {r["stage"] for r in records} == {0} and all(r["prompt"][0]["role"] == "system" for r in records)
    assert len(sft_examples(traj)) == 1


# --- exports --------------------------------------------------------------------------------


def test_exports_keep_stage_boundaries() -> None:
    _, traj = oracle(NOTES)
    values = [type("V", (), {"reward": 0.0, "ret": 0.0, "advantage": 0.0})()] * len(traj.steps)
    records = turn_records(traj, values)
    first_day2 = traj.stages[1].first_step
    assert [r["stage"] for r in records] == [0] * (first_day2 - 1) + [1] * (len(records) - first_day2 + 1)
    day2 = records[first_day2 - 1]["prompt"]
    assert day2[0]["role"] == "system" and day2[1]["content"].startswith(STAGE_MARK)
    assert not any(m.get("role") == "tool" and "shifts" in m.get("content", "") for m in day2)
    examples = sft_examples(traj)
    assert [stages for _, stages in examples] == [[0], [1]]
    assert all(ex["messages"][0]["role"] == "system" for ex, _ in examples)
    assert sum(len(ex["messages"]) for ex, _ in examples) == len(traj.messages)
    _, talk = oracle(TALK)
    assert [stages for _, stages in sft_examples(talk)] == [[0, 1]]


# --- validation -----------------------------------------------------------------------------


def broken(path: Path, edit: Any) -> str:
    d = copy.deepcopy(data(path))
    edit(d)
    with pytest.raises(SpecError) as err:
        spec_from_data(d, "day.yaml")
    return str(err.value)


@pytest.mark.parametrize(
    ("edit", "field", "words"),
    [
        (lambda d: d.pop("clock"), "<root>", "clock: a spec with stages needs the workspace time"),
        (lambda d: d.update(clock="Monday 9am"), "clock", "pattern"),
        (lambda d: d.update(clock="2025-13-12T10:00"), "<root>", "is not a time of the form YYYY-MM-DDTHH:MM"),
        (lambda d: d["stages"][0].update(advance={}), "stages[0].advance", "give 'to', or move by"),
        (
            lambda d: d["stages"][0].update(advance={"to": "2025-03-12T09:00", "days": 1}),
            "stages[0].advance",
            "not both",
        ),
        (lambda d: d["stages"][0].update(advance={"to": "2025-03-01T09:00"}), "<root>", "must move forward"),
        (lambda d: d["stages"][0].update(advance={"days": 1, "at": "25:00"}), "stages[0].advance.at", "pattern"),
        (lambda d: d["stages"][0].update(advance={"days": 10**9}), "stages[0].advance.days", "less than or equal"),
        (lambda d: d["stages"][0].update(context="notes"), "stages[0]", "goes with context 'notes'"),
        (lambda d: d["stages"][0].update(context="notes", notes="handoff"), "stages[0].notes", "pattern"),
        (lambda d: d["stages"][0]["reference"].pop(), "stages[0]", "ends with an answer"),
        (lambda d: d["reference"].pop(), "<root>", "the first stage's reference ends with an answer"),
        (lambda d: d["stages"][0]["checks"].append(dict(d["checks"][0])), "<root>", "duplicate ids in checks"),
        (lambda d: d["stages"].append(copy.deepcopy(d["stages"][0])), "<root>", "duplicate ids in"),
        (lambda d: d["stages"][0].update(id="next day!"), "stages[0].id", "pattern"),
        (lambda d: d["stages"][0].update(checks=[]), "stages[0].checks", "at least 1"),
        (lambda d: d.update(stages=[]), "stages", "at least 1"),
        (lambda d: d.update(stages="tomorrow"), "stages", "valid list"),
        (lambda d: d["stages"][0].update(user={"persona": "x", "opening": "y"}), "stages[0].user.persona", "Extra"),
        (lambda d: d["stages"][0]["mutations"][0].update(op="upsert"), "stages[0].mutations[0].op", "insert"),
    ],
)
def test_malformed_stages_get_a_clear_error(edit: Any, field: str, words: str) -> None:
    message = broken(TALK, edit)
    assert message.startswith("day.yaml: invalid spec")
    assert f"  - {field}: " in message and words in message, message


def test_the_json_schema_describes_stages() -> None:
    schema = TaskSpec.model_json_schema()
    stage = schema["$defs"]["Stage"]
    assert {"advance", "mutations", "context", "notes", "user", "checks", "reference"} <= set(stage["properties"])
    assert stage["properties"]["context"]["enum"] == ["conversation", "notes"]
    assert "stages" in schema["properties"] and "clock" in schema["properties"]


def test_notes_need_the_documents_service() -> None:
    def edit(d: dict[str, Any]) -> None:
        d["stages"][0].update(context="notes", notes="/Notes/handoff")

    assert "'notes' needs the documents service" in broken(TALK, edit)


def test_a_stage_file_error_names_the_file(tmp_path: Path) -> None:
    d = data(TALK)
    d["stages"][0]["advance"] = {"hours": -5}
    path = tmp_path / "two_days.yaml"
    path.write_text(yaml.safe_dump(d))
    with pytest.raises(SpecError, match=r"two_days.yaml: invalid spec\n  - stages\[0\].advance.hours: "):
        load_spec(path)


def test_a_mutation_of_a_record_the_agent_deleted_is_skipped() -> None:
    d = data(NOTES)
    d["stages"][0]["mutations"].insert(0, {"service": "tickets", "collection": "tickets", "op": "delete", "id": "nope"})
    env = Environment(spec_from_data(d))
    traj = run_episode(env, OracleTeacher())
    assert traj.grade.score == 1.0  # the rest of the changes still happened


def test_a_malformed_turn_at_a_stage_boundary_is_an_observation() -> None:
    env = Environment(load_spec(TALK))
    env.reset()
    obs = env.step(AssistantTurn(content="All done, nothing else."))  # ends day 1 at once: day 2 begins
    assert obs.messages[-1]["content"].startswith(f"{STAGE_MARK}2 of 2") and not obs.done
    obs = env.step({"role": "assistant", "tool_calls": "garbage"})
    assert not obs.done and "malformed" in obs.messages[0]["content"]


def test_claw_eval_export_skips_multi_stage_environments(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["export", "claw-eval", str(EXAMPLES), "--out", str(tmp_path / "claw")])
    assert result.exit_code == 0, result.output
    staged = sum(1 for path in EXAMPLES.glob("*.yaml") if load_spec(path).stages)
    assert staged >= 4 and f"skipped {staged} multi-stage environment(s)" in result.output
    assert not (tmp_path / "claw" / "hiring_loop_three_days").exists()
    assert (tmp_path / "claw" / "printer_tickets_resolution" / "task.yaml").exists()


STAGE_FIELDS = [
    "id",
    "advance",
    "mutations",
    "notify",
    "context",
    "notes",
    "user",
    "events",
    "faults",
    "checks",
    "reference",
]


@pytest.mark.parametrize("key", STAGE_FIELDS)
def test_any_junk_in_a_stage_field_is_a_spec_error(key: str) -> None:
    """Hostile values in every field of a stage: a SpecError naming the file, never another exception."""
    for junk in (None, 7, -1.5, "x" * 10_000, [], [None], {"a": {"b": [1]}}, True, "../../etc/passwd"):
        d = data(NOTES)
        d["stages"][0][key] = junk
        try:
            spec = spec_from_data(d, "junk.yaml")
        except SpecError as exc:
            assert str(exc).startswith("junk.yaml: invalid spec")
            continue
        run_episode(Environment(spec), OracleTeacher())  # what validates must also run


# --- findings and repairs -------------------------------------------------------------------


def test_a_later_stage_user_knows_the_stage_day() -> None:
    env, _ = oracle(THREE)
    assert env.user.today == date(2025, 3, 19)  # Wednesday's stage, not the spec's first day


def test_stage_findings_are_located_in_their_stage() -> None:
    spec = load_spec(Path(__file__).parent / "broken_specs" / "stage_check_already_true.yaml")
    report = verify(spec)
    found = [f for f in report.findings if f.kind == "vacuous_check"]
    assert [f.location for f in found] == [Location(section="checks", key="ticket_exists", stage=0)]
    assert vacuous_checks(report.findings) == ["ticket_exists"]
    assert programmatic_repair(spec, report) is None  # the first stage's checks are not the ones at fault


def test_a_weak_stage_gets_its_own_main_check_required() -> None:
    spec = load_spec(TALK)
    assert spec.stages is not None
    weak = Finding(kind="weak_requirement", where="stages[0].checks", evidence="-", location=Location.checks(stage=0))
    required = dict(
        repair(Recipe("vendor_dispute", 1, ()), spec, Verification(admitted=False, findings=[weak])).required
    )
    stage_checks = {c.id for c in spec.stages[0].checks}
    assert required and all(cid in stage_checks and ok for cid, ok in required.items())
