"""Month-end close: only receipted drafts go out; overnight one is rejected and all but one of the rest approved;
the last is approved in the morning, as the agent starts looking (a stage event)."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build

from coworkenv.agents import OracleTeacher
from coworkenv.grading.score import PASS_THRESHOLD
from coworkenv.runtime import Environment
from coworkenv.synth.composer import Recipe, compose
from coworkenv.verify import verify
from coworkenv.verify.admission import _pacing_variants, play


class TestMonthEndClose(BlueprintCases):
    name = "month_end_close"

    def test_only_my_receipted_drafts_are_submitted(self) -> None:
        for seed in range(6):
            draft = build(self.name, seed=seed)
            expenses = {e["id"]: e for e in draft.fixtures["expenses"]["expenses"]}
            me = draft.context.split("(")[1].split(")")[0]
            wanted = {i for i, e in expenses.items() if e["employee"] == me and e["status"] == "draft" and e["receipt"]}
            assert set(draft.summary) == wanted
            assert any(e["employee"] == me and e["status"] == "draft" and not e["receipt"] for e in expenses.values())

    def test_overnight_one_is_rejected_and_the_rest_approved_but_one(self) -> None:
        for seed in range(6):
            draft = build(self.name, seed=seed)
            (stage,) = draft.stages
            statuses = {m["id"]: m["record"]["status"] for m in stage.mutations}
            [event] = stage.events
            [late] = event["mutations"]
            assert event["on_tool"] == "expenses_list_expenses" and late["record"] == {"status": "approved"}
            assert set(statuses) | {late["id"]} == set(draft.summary) and late["id"] not in statuses
            assert sorted(statuses.values()).count("rejected") == 1
            rejected = next(i for i, s in statuses.items() if s == "rejected")
            told = next(c for c in stage.checks if c.id == "rejection_told")
            assert told.values == [rejected]
            finance = next(c for c in stage.checks if c.id == "finance_told")
            assert late["id"] in finance.where  # the finance mail must name the late approval

    def test_an_agent_working_from_the_overnight_picture_fails_and_pacing_does_not_matter(self) -> None:
        spec = compose(Recipe(self.name, 2))
        report = verify(spec)
        assert report.admitted and report.probe_scores["ignore_event@stage2"] < PASS_THRESHOLD
        reference = play(Environment(spec), OracleTeacher())
        paced = _pacing_variants(spec, reference)
        assert paced
        for name, policy in paced:
            assert play(Environment(spec), policy).grade.score == reference.grade.score == 1.0, name
