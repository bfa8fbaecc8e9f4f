"""notify: the notice reaches the right place and names the customer; elsewhere, vague or twice, it fails."""

from __future__ import annotations

from step_cases import admitted, edit_call, records, score, twice

from coworkenv.verify.gaming import DuplicateWrite


def test_a_post_in_another_channel_fails() -> None:
    spec = admitted(21, "locate_by_attribute", "act_log", "notify_channel")
    channels = [c["name"] for c in records(spec, "chat", "channels")]
    post = next(s for s in spec.reference if getattr(s, "call", "") == "chat_post_message")
    assert len(channels) == 3 and f"#{post.args['channel']}" in spec.user.opening
    other = next(c for c in channels if c != post.args["channel"])
    assert score(spec, edit_call(spec, "chat_post_message", lambda a: {**a, "channel": other})) < 0.75


def test_a_dm_to_someone_else_or_without_the_customer_fails() -> None:
    spec = admitted(22, "locate_by_name", "act_create_ticket", "notify_dm")
    owner = records(spec, "crm", "accounts")[0]["owner"]
    other = records(spec, "crm", "accounts")[1]["owner"]
    assert owner != other
    assert score(spec, edit_call(spec, "chat_send_dm", lambda a: {**a, "user": other})) < 0.75
    assert score(spec, edit_call(spec, "chat_send_dm", lambda a: {**a, "text": "Done."})) < 0.75


def test_the_owner_mail_carries_the_key_result() -> None:
    spec = admitted(23, "locate_from_ticket", "act_comment", "notify_mail")
    ticket = next(t for t in records(spec, "tickets", "tickets") if t["status"] == "open")["id"]
    mail = next(s for s in spec.reference if getattr(s, "call", "") == "mail_send")
    assert mail.args["body"].endswith("${complaint.tickets[0].id}.")
    assert ticket.startswith("tkt-")


def test_notes_go_into_the_target_account_document_not_a_look_alike() -> None:
    spec = admitted(24, "locate_by_name", "read_tickets", "derive_pick_ticket", "act_comment", "notify_notes")
    docs = records(spec, "documents", "documents")
    assert len(docs) >= 3 and docs[0]["title"].startswith(records(spec, "crm", "accounts")[0]["name"])
    wrong = edit_call(spec, "documents_append", lambda a: {**a, "document_id": docs[1]["id"]})
    assert score(spec, wrong) < 0.75


def test_a_note_appended_twice_fails_and_the_verifier_plays_that_cheat() -> None:

    for chain in (("locate_by_name", "act_log", "notify_notes"), ("locate_from_ticket", "act_log", "notify_notes")):
        spec = admitted(25, *chain)
        assert score(spec, twice(spec, "documents_append")) < 0.75
        appends = [i for i, s in enumerate(spec.reference) if getattr(s, "call", "") == "documents_append"]
        assert [n for n, _ in DuplicateWrite().variants(spec)][-1] == f"duplicate_write[{appends[0]}]"


def test_the_topic_channel_is_found_through_the_channel_list() -> None:
    spec = admitted(26, "locate_by_attribute", "act_log", "notify_topic_channel")
    post = next(s for s in spec.reference if getattr(s, "call", "") == "chat_post_message")
    channels = sorted(c["name"] for c in records(spec, "chat", "channels"))
    calls = [getattr(s, "call", "") for s in spec.reference]
    assert calls.index("chat_list_channels") < calls.index("chat_post_message")
    topic = next(c["topic"] for c in records(spec, "chat", "channels") if c["name"] == post.args["channel"])
    assert topic in spec.user.opening and post.args["channel"] not in spec.user.opening  # the topic names it
    for other in channels:
        if score(spec, edit_call(spec, "chat_post_message", lambda a, o=other: {**a, "channel": o})) == 1.0:
            break
    else:
        raise AssertionError("no channel takes the post")
    wrong = [c for c in channels if c != other]
    assert all(
        score(spec, edit_call(spec, "chat_post_message", lambda a, o=o: {**a, "channel": o})) < 0.75 for o in wrong
    )
