"""report: the answer names the customer and states what was derived; a bare "Done" fails."""

from __future__ import annotations

from step_cases import admitted, score

from coworkenv.spec.models import AnswerStep


def _answered(spec, text):  # type: ignore[no-untyped-def]
    return [AnswerStep(answer=text) if isinstance(s, AnswerStep) else s for s in spec.reference]


def test_a_bare_done_fails_and_the_reference_answer_passes() -> None:
    spec = admitted(31, "locate_by_name", "read_deals", "derive_sum", "act_log", "notify_dm", "report")
    answer = next(s for s in spec.reference if isinstance(s, AnswerStep)).answer
    assert "Done for" in answer and "${sum(deals.deals[*].amount)}" in answer
    assert score(spec) == 1.0
    assert score(spec, _answered(spec, "Done.")) < 0.75


def test_a_wrong_count_fails() -> None:
    spec = admitted(32, "locate_by_name", "read_tickets", "derive_count", "act_log", "notify_channel", "report")
    company = spec.services["crm"]["accounts"][0]["name"]
    assert score(spec, _answered(spec, f"Done for {company}. They have 99 open tickets.")) < 0.75
