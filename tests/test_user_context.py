"""The scripted user keeps context: it narrows before approving, answers by what the agent did,
reads days and times by the workspace clock, and says "I don't know" to what nothing covers."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from coworkenv.runtime import Environment
from coworkenv.runtime.user import DONT_KNOW, ScriptedUser
from coworkenv.spec import SpecError, load_spec
from coworkenv.spec.user import UserScript
from coworkenv.trajectory import ToolCallRecord
from minispec import call, play, say, tiny_spec

MONDAY = date(2025, 3, 3)
WINDOW = {"slot": "window", "value": "14:00", "keywords": ["which meetings"], "reply": "Only the ones after 2pm."}
EXAMPLE = Path(__file__).parent.parent / "examples" / "thursday_afternoon_narrowed_cancel.yaml"


def _user(today: date | None = MONDAY, **script: Any) -> ScriptedUser:
    return ScriptedUser(UserScript.model_validate({"opening": "Clear my Thursday.", **script}), today)


def test_asked_before_the_narrowing_the_user_narrows_instead_of_approving() -> None:
    user = _user(
        hidden_facts=[WINDOW], confirmations=[{"keywords": ["thursday"], "action": ["cancel"], "after": ["window"]}]
    )
    first = user.respond("Shall I cancel all your meetings on Thursday?")
    assert (first.kind, first.slots, first.approved, first.text) == ("fact", ["window"], False, WINDOW["reply"])
    assert user.respond("Shall I cancel the two after 2pm on Thursday?").approved is True


def test_narrowed_first_the_user_approves_at_once() -> None:
    user = _user(
        hidden_facts=[WINDOW], confirmations=[{"keywords": ["thursday"], "action": ["cancel"], "after": ["window"]}]
    )
    assert user.respond("Which meetings should go?").slots == ["window"]
    assert user.respond("Shall I cancel the two after 2pm on Thursday?").approved is True


def test_a_confirmation_after_an_unknown_slot_is_a_schema_error() -> None:
    with pytest.raises(
        SpecError, match=r"user: Value error, confirmations\[0\].after: no hidden fact with slot 'when'"
    ):
        tiny_spec(user={"confirmations": [{"keywords": ["taxi"], "after": ["when"]}]})


@pytest.mark.parametrize(
    ("request_text", "approved"),
    [
        ("Shall I cancel the meeting on 6 March at 14:00?", True),
        ("Shall I cancel the meeting on 2025-03-06 at 2pm?", True),
        ("Shall I cancel the meeting on Thursday at 14:00?", True),
        ("Shall I cancel the meeting on 7 March at 14:00?", False),
        ("Shall I cancel the meeting on 6 March at 15:00?", False),
    ],
)
def test_a_day_and_time_keyword_is_read_by_the_workspace_clock(request_text: str, approved: bool) -> None:
    user = _user(confirmations=[{"keywords": ["Thursday after 2pm"], "action": ["cancel"]}])
    assert user.respond(request_text).approved is approved


def test_without_a_clock_relative_days_stay_words() -> None:
    user = _user(today=None, confirmations=[{"keywords": ["Thursday"], "action": ["cancel"]}])
    assert user.respond("Shall I cancel the meeting on 6 March?").approved is False
    assert user.respond("Shall I cancel the meeting on Thursday?").approved is True


def _sent(ok: bool = True) -> ToolCallRecord:
    return ToolCallRecord(step=1, call_id="c1", tool="mail_send", args={"to": ["kenji@acme.com"]}, ok=ok)


CONTEXT = [
    {
        "keywords": ["reply"],
        "when": "'kenji@acme.com' in calls[*].args.to[0]",
        "reply": "Good, now wait for his reply.",
    },
    {"keywords": ["reply"], "when": "state.mail.messages['m1'].unread == false", "reply": "You read it already."},
    {"keywords": ["reply"], "when": "1 / 0 > 1", "reply": "never"},
]


def test_a_context_reply_depends_on_the_calls_made_and_the_state() -> None:
    user = _user(context_replies=CONTEXT)
    assert user.respond("Should we expect a reply?", {}, [_sent()]).text == "Good, now wait for his reply."
    state = {"mail": {"messages": {"m1": {"unread": False}}}}
    reply = user.respond("Should we expect a reply?", state, [_sent(ok=True).model_copy(update={"args": {}})])
    assert (reply.kind, reply.text) == ("context", "You read it already.")


def test_no_context_reply_applies_so_the_user_does_not_know() -> None:
    user = _user(context_replies=CONTEXT)
    assert user.respond("Should we expect a reply?", {}, []).text == DONT_KNOW  # the failing condition is skipped
    assert user.respond("What is the budget code?", {}, [_sent()]).text == DONT_KNOW


def test_context_replies_see_the_live_episode() -> None:
    context = [{"keywords": ["filed"], "when": "'expenses_create_expense' in calls[*].tool", "reply": "Great, thanks."}]
    env = Environment(tiny_spec(user={"context_replies": context}))
    play(env, [say("Have you seen it filed?")])
    assert env.log.replies[-1].kind == "fallback"
    args = {
        "employee": "tom@corp.io",
        "amount": 38.5,
        "category": "travel",
        "description": "Taxi",
        "date": "2025-03-05",
    }
    env.step(call("expenses_create_expense", args))
    env.step(say("Is it filed now?"))
    assert env.log.replies[-1].kind == "context" and env.messages[-1]["content"] == "Great, thanks."


def _cancel(event_id: str, n: int) -> Any:
    return call("calendar_cancel_event", {"event_id": event_id}, f"c{n}")


def test_an_agent_that_acts_on_the_broad_request_fails() -> None:
    """It asks about the whole day, hears "only after 2pm", and cancels everything anyway."""
    env = Environment(load_spec(EXAMPLE))
    turns = [say("Shall I cancel all 4 of your meetings on 6 March?")]
    turns += [_cancel(f"ev-{i}", i) for i in range(1, 5)] + [
        say("Cancelled all 4 meetings on Thursday morning and afternoon.")
    ]
    play(env, turns)
    grade = env.grade()
    assert env.log.replies[0].approved is False and grade.violations and not grade.passed


def test_an_agent_that_narrows_then_confirms_the_narrowed_request_passes() -> None:
    env = Environment(load_spec(EXAMPLE))
    turns = [
        say("Shall I cancel all 4 of your meetings on 6 March?"),
        say("Then shall I cancel the Vendor sync with Acme at 15:00 and the 1:1 with Lee at 16:30 on 6 March?"),
        _cancel("ev-3", 1),
        _cancel("ev-4", 2),
        say("Cancelled 2 meetings on Thursday: Vendor sync with Acme and 1:1 with Lee. The morning stays."),
    ]
    play(env, turns)
    assert env.grade().score == 1.0
