"""The scripted user gives nothing away by default: no approval and no next request for a
question it was not scripted to answer, and approval only for a request that says what."""

from __future__ import annotations

from coworkenv.runtime.user import ScriptedUser
from coworkenv.spec.user import UserScript


def _user(**script: object) -> ScriptedUser:
    return ScriptedUser(UserScript.model_validate({"opening": "Please send Kenji the quote.", **script}))


def test_an_unmatched_confirmation_request_is_not_approved() -> None:
    user = _user(confirmations=[{"keywords": ["kenji"], "reply": "Yes, send it to Kenji."}])
    reply = user.respond("I'm about to delete the old draft. Shall I go ahead?")
    assert reply.approved is False and "not sure" in (reply.text or "")


def test_a_scripted_denial_is_never_turned_into_an_approval() -> None:
    user = _user(confirmations=[{"keywords": ["quote"], "approve": False, "reply": "No, hold it."}])
    assert user.respond("Shall I send the quote to Kenji?").approved is False
    assert user.respond("Shall I send the invoice to Kenji?").approved is False


def test_without_scripted_confirmations_nothing_is_approved() -> None:
    reply = _user().respond("Shall I send the quote to Kenji Watanabe now?")
    assert reply.approved is False


def test_a_content_free_confirmation_request_is_not_approved() -> None:
    user = _user(confirmations=[{"reply": "Yes."}, {"keywords": ["quote"], "reply": "Yes, send it."}])
    for text in ("Shall I go ahead?", "Everything is ready. Should I proceed?", "Shall I send it?"):
        assert user.respond(text).approved is False, text


def test_a_confirmation_is_approved_when_it_names_action_and_target() -> None:
    user = _user(confirmations=[{"keywords": ["quote", "kenji"], "reply": "Yes, send it."}])
    assert user.respond("Shall I email the final quote to Kenji?").approved is True
    assert user.respond("Shall I go ahead with the quote?").approved is False  # no action named


def test_the_scripted_action_words_are_the_ones_that_count() -> None:
    user = _user(confirmations=[{"keywords": ["quote"], "action": ["email"], "reply": "Yes."}])
    assert user.respond("Shall I share the quote?").approved is False
    assert user.respond("Shall I email the quote?").approved is True


def test_an_unmatched_question_gets_i_dont_know_not_the_next_request() -> None:
    user = _user(follow_ups=[{"message": "Also book the room."}])
    reply = user.respond("Which currency should the quote use?")
    assert reply.kind == "fallback" and "don't know" in (reply.text or "") and user.next_follow_up == 0
    assert user.respond("Sent the quote to Kenji.").kind == "follow_up"


def test_an_unmatched_question_does_not_end_the_conversation() -> None:
    assert _user().respond("What subject line do you want?").kind == "fallback"


def test_a_polite_close_is_still_a_report() -> None:
    user = _user(follow_ups=[{"message": "Also book the room."}])
    assert user.respond("Sent the quote. Is there anything else I can help with?").kind == "follow_up"
