"""The verifier on events with filters and delays, the new check kinds and the context-keeping user:
undoing each defect gets its broken spec admitted, the probes place a filtered or delayed event
where it really fires, and cheating agents fail the examples that use the new constructs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from coworkenv.runtime import Environment
from coworkenv.spec import load_spec, spec_from_data
from coworkenv.verify import static_findings, verify
from coworkenv.verify.gaming import PACING
from coworkenv.verify.perturb import guarded_calls
from minispec import call, play, say, tiny_spec

BROKEN = Path(__file__).parent / "broken_specs"
IT = Path(__file__).parent.parent / "examples" / "it_laptop_request_chat_reply.yaml"

FIXES: dict[str, Callable[[dict[str, Any]], None]] = {
    "pattern_matches_distractor": lambda d: d["checks"][0].update(pattern=r"^sam\.ortiz@corp\.com$"),
    "max_calls_guard_light": lambda d: d["checks"][3].update(required=True),
    "record_absent_guard_light": lambda d: d["checks"][3].update(required=True),
    "max_calls_lets_duplicate_pass": lambda d: d["checks"][4].update(max=1),
    "any_of_vague": lambda d: d["checks"][2].update(values=[["sam.ortiz@corp.com", "Sam Ortiz"], ["assigned"]]),
    "number_tolerance_loose": lambda d: d["checks"][0].update(
        tolerance=0.01, where="r.channel == 'finance' and r.author == 'me'"
    ),
    "own_post_number_distractor": lambda d: d["checks"][0].update(tolerance=0.01),
    "own_expense_number_distractor": lambda d: d["checks"][0].update(tolerance=0.01),
}


@pytest.mark.parametrize("name", sorted(FIXES))
def test_undoing_the_defect_gets_the_spec_admitted(name: str) -> None:
    data = yaml.safe_load((BROKEN / f"{name}.yaml").read_text())
    FIXES[name](data)
    report = verify(spec_from_data(data))
    assert report.admitted, [f.line() for f in report.findings]


def test_pacing_counts_a_filtered_delayed_event_from_the_call_that_matches() -> None:
    """The first tickets_search (team 'search') does not trigger; the payments one does, and the event fires
    two steps later: the 'faster' run merges the two calls between trigger and firing."""
    spec = load_spec(BROKEN / "event_when_pacing.yaml")
    names = [name for name, _ in PACING.variants(spec, {"grabbed": 4})]
    assert "pacing[events[0].faster]" in names
    finding = next(f for f in verify(spec).findings if f.kind == "nondeterministic")
    assert "two calls in one turn" in finding.evidence


def test_a_record_absent_guard_is_broken_by_a_damaging_write() -> None:
    spec = load_spec(BROKEN / "record_absent_guard_light.yaml")
    [(_, steps)] = [g for g in guarded_calls(spec) if g[0] == "checks:none_closed"]
    assert [(s.call, s.args) for s in steps] == [("tickets_update", {"ticket_id": "tkt-1", "status": "closed"})]


def test_a_max_calls_guard_is_passed_by_one_call_too_many() -> None:
    spec = load_spec(BROKEN / "max_calls_guard_light.yaml")
    [(_, steps)] = [g for g in guarded_calls(spec) if g[0] == "checks:one_assign"]
    assert len(steps) == 1  # the reference assigns once; one more passes the bound of 1


def _it(turns: list[Any]) -> Any:
    env = Environment(load_spec(IT))
    play(env, turns)
    return env


POST = {"channel": "it-requests", "text": "Could I get a replacement laptop? The screen cracked."}
LOOK = call("chat_search_messages", {"channel": "it-requests", "author": "priya.nair@northwind.io"}, "c3")


def _ticket(description: str) -> Any:
    return call("tickets_create", {"title": "Laptop replacement", "team": "it", "description": description}, "c4")


REPORT = say("IT approved a replacement with loaner tag LT-4471; I opened tkt-11 for it.")


def test_an_agent_that_waits_for_it_and_quotes_the_tag_passes() -> None:
    env = _it(
        [
            call("chat_post_message", POST),
            call("tickets_search", {"team": "it"}, "c2"),
            LOOK,
            _ticket("Tag LT-4471; repair quoted at $1,299"),
            REPORT,
        ]
    )
    assert env.grade().score == 1.0


def test_an_agent_posting_in_the_wrong_channel_never_hears_back_and_fails() -> None:
    wrong = {**POST, "channel": "general"}
    env = _it(
        [
            call("chat_post_message", wrong),
            call("tickets_search", {"team": "it"}, "c2"),
            LOOK,
            _ticket("pending"),
            REPORT,
        ]
    )
    assert env.fired == set() and not env.grade().passed


def test_an_agent_that_posts_twice_fails() -> None:
    again = call("chat_post_message", POST, "c9")
    env = _it([call("chat_post_message", POST), again, LOOK, _ticket("Tag LT-4471"), REPORT])
    grade = env.grade()
    assert not grade.passed and not next(c for c in grade.checks if c.id == "asked_once").passed


def test_an_agent_that_does_not_wait_for_the_answer_fails() -> None:
    env = _it([call("chat_post_message", POST), _ticket("Laptop replacement, IT to confirm"), REPORT])
    assert not env.grade().passed


def test_a_record_absent_that_asks_for_a_removal_is_no_guard() -> None:
    """Only a record_absent that holds at the start is a guard: a spec checking a removal and guarding
    the rest is not "guards only"."""
    removal = {"id": "gone", "kind": "record_absent", "service": "mail", "collection": "messages"}
    spec = tiny_spec(
        checks=[
            {**removal, "where": "r.id == 'm2' and r.folder == 'inbox'"},
            {"id": "kept", "kind": "unchanged", "service": "expenses", "collection": "expenses"},
        ],
        reference=[{"call": "mail_move", "args": {"message_id": "m2", "folder": "trash"}}, {"answer": "Moved it."}],
    )
    assert [f for f in static_findings(spec) if f.kind == "vacuous_check"] == []
    unbreakable = tiny_spec(checks=[*spec.model_dump()["checks"], {**removal, "id": "never", "where": "r.id == 'm9'"}])
    assert [f.where for f in static_findings(unbreakable) if f.kind == "vacuous_check"] == ["checks[2]"]


def _catering(spec: Any, figure: str) -> Any:
    """An agent that looks up the catering expenses and posts ``figure`` to #finance."""
    env = Environment(spec)
    look = call("expenses_list_expenses", {"employee": "ravi.menon@corp.com", "category": "catering"})
    post = call("chat_post_message", {"channel": "finance", "text": f"Hi Lena, it came to {figure} USD."}, "c2")
    play(env, [look, post, say("Done: I told Lena in #finance.")])
    return env.grade()


def test_a_loose_field_number_lets_the_wrong_figure_pass_and_its_twin_does_not() -> None:
    """February's 1,460 (the look-alike expense) is within the broken spec's 500; the corrected twin wants 1,840.50."""
    data = yaml.safe_load((BROKEN / "number_tolerance_loose.yaml").read_text())
    assert _catering(spec_from_data(data), "1,460.00").passed
    FIXES["number_tolerance_loose"](data)
    fixed = spec_from_data(data)
    assert not _catering(fixed, "1,460.00").passed
    assert _catering(fixed, "1,840.50").passed


def test_a_loose_check_on_the_agents_own_post_lets_the_look_alike_figure_pass() -> None:
    """Only the agent's post is selected, so the chat never satisfies the check; but February's 1,460 is within
    400 of March's 1,840.50. The distractor run posts February's figure; the channel swap alone never did."""
    data = yaml.safe_load((BROKEN / "own_post_number_distractor.yaml").read_text())
    spec = spec_from_data(data)
    assert _catering(spec, "1,460.00").passed
    assert [f for f in static_findings(spec) if f.kind == "vacuous_check"] == []
    report = verify(spec)
    assert report.probe_scores["distractor[checks[0].value]"] >= 0.75
    assert report.probe_scores["distractor[checks[0]]"] < 0.75  # the record swap moves the post to #general
    FIXES["own_post_number_distractor"](data)
    assert not _catering(spec_from_data(data), "1,460.00").passed
