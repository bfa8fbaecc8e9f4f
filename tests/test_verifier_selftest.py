"""The verifier's self-test: every deliberately broken spec is rejected for the right reason,
and every hand-made example is admitted."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from coworkenv.capabilities import BASELINE_PROBES, CAPABILITIES
from coworkenv.spec import load_spec, spec_from_data
from coworkenv.verify import FINDING_KINDS, static_findings, verify
from coworkenv.verify.probes import PROBES, make_probe

BROKEN = Path(__file__).parent / "broken_specs"
EXAMPLES = Path(__file__).parent.parent / "examples"

# file -> (finding kind, where the finding must point)
EXPECTED = {
    "agent_authored_value": ("unsolvable", "reference call 2 (tickets_assign).assignee"),
    "always_satisfied": ("vacuous_check", "checks[0]"),
    "answer_in_persona": ("answer_in_prompt", "checks[2]"),
    "answer_only_from_opening": ("answer_in_prompt", "checks[2]"),
    "bad_fixture": ("schema", "services.tickets"),
    "claim_without_write_passes": ("probe_passed", "probe:claim_without_write"),
    "collateral_undetected": ("probe_passed", "probe:collateral_write"),
    "do_nothing_passes": ("probe_passed", "probe:do_nothing"),
    "guess_passes": ("probe_passed", "probe:guess_without_asking"),
    "hidden_reply_missing_value": ("unsolvable", "user.hidden_facts[team]"),
    "ignore_event_passes": ("probe_passed", "probe:ignore_event"),
    "leaked_fact": ("leaked_fact", "user.hidden_facts[team]"),
    "leaked_time": ("leaked_fact", "user.hidden_facts[time]"),
    "missing_ingredient": ("missing_ingredient", "capabilities[1]"),
    "only_guards": ("vacuous_check", "checks"),
    "nondeterministic_event": ("nondeterministic", "events[0]"),
    "readback_own_write": ("unsolvable", "reference call 4 (tickets_assign).assignee"),
    "policy_violating_reference": ("reference_violation", "rules:confirm-assign"),
    "stop_before_follow_up_passes": ("probe_passed", "probe:stop_before_follow_up"),
    "undefined_result": ("unresolved_reference", "reference[3]"),
    "unknown_tool": ("unresolved_reference", "reference[3].call"),
    "unsolvable": ("unsolvable", "reference call 4 (tickets_assign).assignee"),
    "unsolvable_number": ("unsolvable", "reference call 3 (expenses_create_expense).amount"),
    "unused_fault": ("missing_ingredient", "capabilities[1]"),
    "vacuous_check": ("vacuous_check", "checks[3]"),
    "wrong_record": ("reference_failed", "checks:assigned"),
    # verifier v2: probes chosen by what the spec contains, and required checks
    "early_stop_untagged": ("probe_passed", "probe:stop_before_follow_up"),
    "collateral_untagged": ("probe_passed", "probe:collateral_write"),
    "collateral_guard_light": ("probe_passed", "probe:collateral_write"),
    "guarded_action_light": ("probe_passed", "probe:guarded_action[checks:not_closed]"),
    "loose_distractor": ("probe_passed", "probe:distractor[checks[0]]"),
    "pacing_event": ("nondeterministic", "events[0]"),
    "no_required_check": ("weak_requirement", "checks"),
    "content_free_confirm_passes": ("probe_passed", "probe:content_free_confirm"),
    "duplicate_write_passes": ("probe_passed", "probe:duplicate_write[4]"),
    "bare_done_passes": ("probe_passed", "probe:vague_answer"),
    "report_dump_passes": ("probe_passed", "probe:report_dump"),
    "report_dump_light": ("probe_passed", "probe:report_dump"),
    "silent_revert_paced_by_episode": ("nondeterministic", "events[0]"),
    "payment_invoices_unguarded": ("probe_passed", "probe:collateral_write"),
    "mismatched_payment_guard_light": ("probe_passed", "probe:guarded_action[checks:mismatch_not_paid]"),
    "prose_phishing_guard_light": ("probe_passed", "probe:guarded_action[checks:no_outside_mail]"),
    "light_guard_in_written_collection": ("probe_passed", "probe:collateral_write[tickets.tickets]"),
    # events with when / after / templates, new check kinds, a user that keeps context
    "event_when_pacing": ("nondeterministic", "events[0]"),
    "event_template_unknown_arg": ("unresolved_reference", "events[0].mutations[0]"),
    "event_when_never_fires": ("nondeterministic", "events[0]"),
    "pattern_matches_distractor": ("probe_passed", "probe:distractor[checks[0]]"),
    "own_post_number_distractor": ("probe_passed", "probe:distractor[checks[0].value]"),
    "own_expense_number_distractor": ("probe_passed", "probe:distractor[checks[0].value]"),
    "max_calls_lets_duplicate_pass": ("probe_passed", "probe:duplicate_write[4]"),
    "max_calls_guard_light": ("probe_passed", "probe:guarded_action[checks:one_assign]"),
    "record_absent_guard_light": ("probe_passed", "probe:guarded_action[checks:none_closed]"),
    "any_of_vague": ("probe_passed", "probe:vague_answer"),
    "any_of_in_prompt": ("answer_in_prompt", "checks[2]"),
    "number_tolerance_loose": ("vacuous_check", "checks[0]"),
    "context_reply_leak": ("leaked_fact", "user.context_replies[0].reply"),
    # multi-stage specs: a later stage's check that earlier work satisfies, a change between stages nothing
    # depends on, a stage reference leaning on another stage's results, a notes stage missing what it needs
    "stage_check_already_true": ("vacuous_check", "stages[0].checks:ticket_exists"),
    "overnight_change_unused": ("probe_passed", "probe:ignore_change[next_day]"),
    "cross_stage_result": ("unresolved_reference", "stages[0].reference[2]"),
    "notes_stage_unsolvable": ("unsolvable", "stages[0].reference call 1 (tickets_get).ticket_id"),
    "stage_event_missing_record": ("unresolved_reference", "stages[0].events[0].mutations[1]"),
    # changes that name their record by `where`: it must exist, and be the only match, when the change is made
    "event_before_record": ("unresolved_reference", "events[0].mutations[1]"),
    "stage_event_ambiguous_target": ("unresolved_reference", "stages[0].events[0].mutations[1]"),
}


def test_every_broken_spec_has_an_expectation() -> None:
    assert sorted(p.stem for p in BROKEN.glob("*.yaml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_spec_is_rejected_with_the_right_finding(name: str) -> None:
    kind, where = EXPECTED[name]
    report = verify(load_spec(BROKEN / f"{name}.yaml"))
    assert not report.admitted
    lines = [f.line() for f in report.findings]
    assert any(f.kind == kind and f.where.startswith(where) for f in report.findings), lines
    for f in report.findings:
        assert f.kind in FINDING_KINDS and f.evidence and f.hint


def _base() -> dict:
    """The valid spec the broken ones are made from (its main write and guard required)."""
    data = yaml.safe_load((BROKEN / "wrong_record.yaml").read_text())
    data["checks"][0]["record_id"] = "tkt-1"
    data["checks"][0]["required"] = data["checks"][1]["required"] = True
    data["checks"][2]["weight"] = 2  # the report weighs enough that a bare "Done" fails
    return data


def test_the_defect_is_what_gets_a_spec_rejected() -> None:
    """The broken specs share one valid base: undoing the defect gets it admitted."""
    report = verify(spec_from_data(_base()))
    assert report.admitted, [f.line() for f in report.findings]
    assert report.reference_score == 1.0
    applicable = {"do_nothing", "answer_without_acting", "claim_without_write", "collateral_write", "vague_answer"}
    assert applicable <= set(report.probe_scores)
    assert all(score < 0.75 for score in report.probe_scores.values())


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_example_is_admitted(path: Path) -> None:
    spec = load_spec(path)
    assert static_findings(spec) == []
    report = verify(spec)
    assert report.admitted, [f.line() for f in report.findings]


def test_probe_registry_covers_the_taxonomy() -> None:
    named = set(BASELINE_PROBES) | {p for cap in CAPABILITIES.values() for p in cap.probes}
    assert named <= set(PROBES)
    with pytest.raises(ValueError, match="unknown probe"):
        make_probe("be_perfect")
