"""Events: ``when`` filters, ``after`` delays, values templated from the triggering call, ``once``.

A reply arrives in the thread the agent wrote to, only for the calls the filter selects,
when the delay says; a call that lacks an argument a template reads triggers nothing; a
malformed event is a clear ``file: field: message`` error."""

from __future__ import annotations

from typing import Any

import pytest

from coworkenv.runtime import Environment
from coworkenv.spec import SpecError
from minispec import call, play, tiny_spec

REPLY = {
    "service": "mail",
    "collection": "messages",
    "op": "insert",
    "record": {
        "id": "reply-${args.message_id}",
        "sender": "tom@corp.io",
        "to": ["me@corp.io"],
        "subject": "Re: your note",
        "body": "Thanks, noted: ${args.body}",
        "date": "2025-03-05T11:00",
        "in_reply_to": "${args.message_id}",
    },
}


def _env(**event: Any) -> Environment:
    spec = tiny_spec(events=[{"id": "tom-replies", "on_tool": "mail_reply", "mutations": [REPLY], **event}])
    return Environment(spec)


def _reply(message_id: str = "m1", body: str = "On it.", call_id: str = "c1") -> Any:
    return call("mail_reply", {"message_id": message_id, "body": body}, call_id)


def _replies(env: Environment) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in env.workspace.records("mail", "messages").items() if k.startswith("reply-")}


def test_the_reply_lands_in_the_thread_the_agent_wrote_to() -> None:
    env = _env(notify="Tom answered in thread ${args.message_id}.")
    obs = play(env, [_reply("m2", "Friday works.")])[-1]
    reply = _replies(env)["reply-m2"]
    assert reply["in_reply_to"] == "m2" and reply["body"] == "Thanks, noted: Friday works."
    assert any("Tom answered in thread m2." in m["content"] for m in obs.messages)
    assert env.steps[-1].events == ["tom-replies"]


def test_when_selects_the_triggering_calls() -> None:
    env = _env(when="args.message_id == 'm2'")
    play(env, [_reply("m1"), call("mail_search", {"query": "x"})])
    assert _replies(env) == {} and env.fired == set()
    env.step(_reply("m2", call_id="c9"))
    assert set(_replies(env)) == {"reply-m2"}


def test_after_waits_that_many_steps_after_the_trigger() -> None:
    env = _env(after=2)
    play(env, [_reply("m1")])
    assert _replies(env) == {}
    env.step(call("mail_search", {"query": "taxi"}))
    assert _replies(env) == {}
    env.step(call("mail_search", {"query": "lunch"}))
    assert set(_replies(env)) == {"reply-m1"} and env.steps[-1].events == ["tom-replies"]


def test_once_is_the_default_and_once_false_repeats_under_fresh_ids() -> None:
    env = _env()
    play(env, [_reply("m1"), _reply("m1", call_id="c2")])
    assert set(_replies(env)) == {"reply-m1"}
    env = _env(once=False)
    play(env, [_reply("m1"), _reply("m1", call_id="c2"), _reply("m2", call_id="c3")])
    assert set(_replies(env)) == {"reply-m1", "reply-m1-2", "reply-m2-3"}


def test_a_delayed_event_that_fires_once_is_not_rearmed_by_a_second_trigger() -> None:
    env = _env(after=1)
    play(env, [_reply("m1"), _reply("m2", call_id="c2"), call("mail_search", {"query": "x"})])
    assert set(_replies(env)) == {"reply-m1"}


@pytest.mark.parametrize(
    "template",
    ["${args.thread_id}", "${args.message_id.deep[99].x}", "${args.body - 3}", "${nothing}", "${len(args) / 0}"],
)
def test_a_template_that_does_not_resolve_triggers_nothing(template: str) -> None:
    """Hostile templates: a missing argument, a path into a string, a type error, an unknown name."""
    mutation = {**REPLY, "record": {**REPLY["record"], "in_reply_to": template}}
    env = Environment(tiny_spec(events=[{"id": "e", "on_tool": "mail_reply", "mutations": [mutation]}]))
    obs = play(env, [_reply("m1")])[-1]
    assert not obs.done and _replies(env) == {} and env.fired == set()


def test_a_failed_call_never_triggers() -> None:
    env = _env()
    play(env, [_reply("nope")])
    assert _replies(env) == {} and env.fired == set()


def test_a_reset_forgets_pending_and_fired_events() -> None:
    env = _env(after=1)
    play(env, [_reply("m1")])
    env.reset()
    env.step(call("mail_search", {"query": "x"}))
    assert _replies(env) == {} and env.fired == set()


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({"after_step": 1, "when": "true"}, "events[0]: Value error, 'when' needs an 'on_tool' trigger"),
        ({"after_step": 1, "after": 2}, "'after' needs an 'on_tool' trigger"),
        ({"after_step": 1, "once": False}, "'once' needs an 'on_tool' trigger"),
        ({"after_step": 1, "notify": "re ${args.x}"}, "templated values ('${...}') need an 'on_tool' trigger"),
        ({"on_tool": "mail_reply", "after": 0}, "events[0].after: Input should be greater than or equal to 1"),
    ],
)
def test_a_malformed_event_names_the_field(event: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as err:
        tiny_spec(events=[{"id": "e", "mutations": [REPLY], **event}])
    assert str(err.value).startswith("tiny: invalid spec") and message in str(err.value)
