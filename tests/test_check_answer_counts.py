"""answer_counts: the report states each label with its number, in the ways people write counts."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from coworkenv.grading.answers import prompt_of
from coworkenv.runtime import Environment
from coworkenv.spec import TaskSpec, spec_from_data
from coworkenv.spec.checks import AnswerCounts, EpisodeLog
from coworkenv.trajectory import Grade
from coworkenv.verify.leaks import answer_findings
from minispec import BASE, play, say, tiny_spec

CHECK = AnswerCounts(id="tally", counts={"urgent": 1, "normal": 3})


@pytest.mark.parametrize(
    "report",
    [
        "urgent: 1, normal: 3",
        "1 urgent and 3 normal tickets",
        "One urgent ticket, three normal ones.",
        "Urgent tickets (1); normal tickets (3).",
        "There is 1 urgent ticket; normal - 3.",
        "I found three normal tickets and a single urgent one.",
    ],
)
def test_counts_written_as_people_write_them(report: str) -> None:
    assert CHECK.judge(EpisodeLog(answers=[(1, report)]))[0], report


@pytest.mark.parametrize(
    "report",
    [
        "urgent: 1",  # a label left out
        "urgent: 2, normal: 3",  # a wrong number
        "3 urgent, 1 normal",  # the numbers swapped
        "urgent: 0, urgent: 1, urgent: 2, normal: 1, normal: 2, normal: 3",  # every number for each label
        "1, 3",  # numbers without their labels
        "urgent and normal tickets: 4 in all",
    ],
)
def test_a_report_that_does_not_state_each_count_fails(report: str) -> None:
    assert not CHECK.judge(EpisodeLog(answers=[(1, report)]))[0], report


def test_zero_and_multi_word_labels() -> None:
    check = AnswerCounts(id="t", counts={"high priority": 2, "blocked": 0})
    assert check.judge(EpisodeLog(answers=[(1, "2 high priority bugs, no blocked ones")]))[0]
    assert check.judge(EpisodeLog(answers=[(1, "High priority: 2. Blocked: none.")]))[0]
    assert not check.judge(EpisodeLog(answers=[(1, "2 high priority, 1 blocked")]))[0]


def test_scope_final_reads_only_the_last_report() -> None:
    check = CHECK.model_copy(update={"scope": "final"})
    log = EpisodeLog(answers=[(1, "urgent: 1, normal: 3"), (2, "Done.")])
    assert CHECK.judge(log) == (True, 1, "found")
    assert not check.judge(log)[0]


@pytest.mark.parametrize(
    "counts",
    [{}, {"": 1}, {" urgent": 1}, {"urgent": -1}, {"a(b": 1}, {"urgent": 10**7}],
)
def test_malformed_counts_are_refused(counts: dict[str, int]) -> None:
    with pytest.raises(ValidationError):
        AnswerCounts(id="t", counts=counts)


def _graded(spec: TaskSpec, report: str) -> Grade:
    env = Environment(spec)
    play(env, [say(report)])
    return env.grade()


def test_a_spec_with_the_kind_grades_an_episode_end_to_end() -> None:
    spec = tiny_spec(checks=[{"id": "tally", "kind": "answer_counts", "counts": {"receipts": 1}, "required": True}])
    right, wrong = _graded(spec, "I found 1 receipt in your mail."), _graded(spec, "I found 2 receipts in your mail.")
    assert right.checks[0].passed and right.passed
    assert not wrong.checks[0].passed and not wrong.passed


def test_counts_the_request_already_states_are_flagged() -> None:
    data = {
        **BASE,
        "user": {**BASE["user"], "opening": "There are 2 meetings; report how many there are."},
        "checks": [{"id": "tally", "kind": "answer_counts", "counts": {"meetings": 2}}],
    }
    spec = spec_from_data(data, "<test>")
    assert CHECK.given(prompt_of(spec)) == []
    assert [f.kind for f in answer_findings(spec)] == ["answer_in_prompt"]
