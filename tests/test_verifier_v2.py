"""Verifier v2: probes chosen by what a spec contains, required checks, pacing, and the repair of it all."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from coworkenv.agents.oracle import OracleTeacher
from coworkenv.bank.repair import repair
from coworkenv.grading.score import PASS_THRESHOLD, REQUIRED_CAP, combine
from coworkenv.runtime.environment import Environment
from coworkenv.spec import load_spec, spec_from_data
from coworkenv.synth.blueprints import BLUEPRINTS
from coworkenv.synth.composer import Recipe, compose
from coworkenv.verify import verify
from coworkenv.verify.admission import ProbeResult, Verification, play
from coworkenv.verify.findings import Finding, Location
from coworkenv.verify.gaming import PACING, seen_values
from coworkenv.verify.probes import PROBES

EXAMPLES = Path(__file__).parent.parent / "examples"
BROKEN = Path(__file__).parent / "broken_specs"
WITH_EVENTS = ["customer_escalation_update", "design_review_slot_taken", "outage_ticket_oncall_swap"]


def test_a_failed_required_check_caps_the_score_below_the_pass_mark() -> None:
    assert combine(0.95, 1.0, 1.0) >= PASS_THRESHOLD
    assert combine(0.95, 1.0, 1.0, required_failed=True) == REQUIRED_CAP < PASS_THRESHOLD
    assert combine(0.2, 1.0, 1.0, required_failed=True) == combine(0.2, 1.0, 1.0)  # a cap, not a floor


def test_the_claw_eval_score_stays_available() -> None:
    data = yaml.safe_load((BROKEN / "no_required_check.yaml").read_text())
    data["checks"][2]["required"] = True  # the report
    grade = play(Environment(spec_from_data(data)), PROBES["vague_answer"]).grade  # all done, reports "Done."
    assert [c.id for c in grade.checks if not c.passed] == ["told"]
    assert grade.claw_eval_score == 0.84 and grade.score == REQUIRED_CAP and not grade.passed


def test_probes_are_chosen_by_content_not_by_tags() -> None:
    spec = load_spec(EXAMPLES / "contractor_access_setup.yaml")
    untagged = spec.model_copy(update={"capabilities": []})
    assert set(verify(untagged).probe_scores) == set(verify(spec).probe_scores)


@pytest.mark.parametrize("name", WITH_EVENTS)
def test_correct_agents_paced_differently_grade_the_same(name: str) -> None:
    spec = load_spec(EXAMPLES / f"{name}.yaml")
    reference = play(Environment(spec), OracleTeacher()).grade.score
    runs = PACING.variants(spec)
    assert runs, "every event gets pacing runs"
    for label, policy in runs:
        assert play(Environment(spec), policy).grade.score == reference == 1.0, label


def test_an_event_on_a_tool_call_is_not_pacing_dependent() -> None:
    """The fix the pacing finding suggests: fire on the call, not on a step count."""
    data = yaml.safe_load((BROKEN / "pacing_event.yaml").read_text())
    data["events"][0] = {**data["events"][0], "after_step": None, "on_tool": "tickets_get_oncall"}
    report = verify(spec_from_data(data))
    assert not [f for f in report.findings if f.kind == "nondeterministic"], [f.line() for f in report.findings]


def test_a_dump_lists_numbers_and_names_seen() -> None:
    text = seen_values([{"role": "tool", "content": '{"id": "tkt-5", "owner": "Sam Ortiz", "amount": 1,200.50}'}])
    assert "tkt-5" in text and "Sam Ortiz" in text and "1,200.50" in text


@pytest.mark.parametrize("name", sorted(BLUEPRINTS))
def test_blueprints_mark_what_defines_the_task_required(name: str) -> None:
    spec = compose(Recipe(name, 3))
    required = [c for c in spec.checks if c.required]
    assert any(c.kind in ("count", "field_equals") for c in required), name
    assert any(c.kind == "unchanged" for c in required), name
    once = {c.where for c in spec.checks if c.kind == "count" and c.value == 1 and c.op == "==" and c.required}
    assert all(c.where in once for c in spec.checks if c.kind == "record_exists"), "a create counts exactly once"


RECIPE = Recipe("expense_report", 5)


def _report(probes: dict[str, ProbeResult]) -> Verification:
    finding = Finding(kind="probe_passed", where="probe:x", evidence="passes", location=Location.probe("x"))
    return Verification(admitted=False, findings=[finding], probes=probes)


def test_repair_makes_what_a_hard_probe_fails_required() -> None:
    answer = next(c for c in compose(RECIPE).checks if c.reads == "answer")
    recipe = replace(RECIPE, required=((answer.id, False),))  # every other check is required from the start
    spec = compose(recipe)
    optional = next(c for c in spec.checks if not c.required and c.kind != "unchanged")
    new = repair(recipe, spec, _report({"duplicate_write[4]": ProbeResult(score=0.9, failed=[optional.id])}))
    assert dict(new.required)[optional.id] is True
    assert next(c for c in compose(new).checks if c.id == optional.id).required


def test_repair_requires_the_answer_checks_a_dump_fails_and_rerolls_where_it_fails_none() -> None:
    spec = compose(RECIPE)
    answer = next(c for c in spec.checks if c.reads == "answer")
    failing = repair(RECIPE, spec, _report({"report_dump": ProbeResult(score=0.8, failed=[answer.id])}))
    assert dict(failing.required)[answer.id] is True and failing.world == RECIPE.world
    fooled = repair(RECIPE, spec, _report({"report_dump": ProbeResult(score=1.0, failed=[])}))
    assert fooled.world == RECIPE.world + 1  # no weight or requirement helps: another world


def test_repair_adds_a_requirement_when_none_is_marked() -> None:
    spec = compose(RECIPE)
    finding = Finding(
        kind="weak_requirement", where="checks", evidence="no check is required", location=Location.checks()
    )
    new = repair(RECIPE, spec, Verification(admitted=False, findings=[finding]))
    assert any(flag for _, flag in new.required)


def test_each_of_several_requirement_rules_is_broken_on_its_own() -> None:
    data = yaml.safe_load((BROKEN / "content_free_confirm_passes.yaml").read_text())
    data["rules"] = [
        {"id": "confirm", "description": "Confirm first.", "tool": "tickets_assign", "rule": "require_confirmation"},
        {
            "id": "oncall",
            "description": "Look up on-call first.",
            "tool": "tickets_assign",
            "rule": "require_prior",
            "prior_tool": "tickets_get_oncall",
        },
    ]
    spec = spec_from_data(data)
    runs = dict(PROBES["guarded_action"].variants(spec))
    assert set(runs) == {"guarded_action[rules:confirm]", "guarded_action[rules:oncall]"}
    grade = play(Environment(spec), runs["guarded_action[rules:confirm]"]).grade
    assert [v.policy for v in grade.violations] == ["confirm"] and grade.score == 0.0
    # without the on-call lookup the reference cannot name the assignee: that run does nothing wrong
    scores = verify(spec).probe_scores
    assert "guarded_action[rules:confirm]" in scores and "guarded_action[rules:oncall]" not in scores
