"""Inbox triage under a policy: archive newsletters, label customer and urgent mail, never delete."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft
from coworkenv.synth.expr_builder import arg, field
from coworkenv.synth.rules import forbid
from coworkenv.synth.world import World

NEWSLETTERS = ("Weekly digest", "Product news", "Webinar invitation", "Industry roundup")
OPENINGS = [
    "Please triage my unread inbox following our email triage policy document.",
    "My inbox is a mess. Go through the unread mail and apply the email triage policy we have in the documents.",
    "Can you do the inbox triage? The rules are in the email triage policy doc. Only unread mail.",
]
POLICY = forbid(
    "never-delete", "mail_move", arg("folder").eq("trash"), "Never delete mail: do not move any message to trash."
)
Mail = list[dict[str, Any]]


class InboxTriage(Blueprint):
    name = "inbox_triage"
    summary = "triage the unread inbox by the written triage policy: archive, label customer and urgent mail"
    capabilities = ("workflow_compliance",)
    options: ClassVar[frozenset[str]] = frozenset({"dynamic", "aggregate", "follow_up"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        customer, domain = world.customer()
        policy = _policy(world, customer, domain)
        archive, customer_mail, urgent = _inbox(world, customer, domain)
        readable = [
            ("documents", "documents", policy["id"], "content"),
            ("mail", "messages", customer_mail[0]["id"], "body"),
        ]
        draft = Draft.start(self.name, "Triage the inbox", world, OPENINGS, {}, set(self.capabilities), readable)
        draft.rules.append(POLICY)
        draft.summary = [m["subject"] for m in urgent]
        _triage(draft, archive, customer_mail, urgent)
        if "dynamic" in options:
            urgent.append(_late_urgent(draft, world))
        answer = (
            f"Archived {len(archive)} newsletter(s), labelled {len(customer_mail)} customer mail(s) and "
            f"{len(urgent)} urgent one(s): " + "; ".join(m["subject"] for m in urgent) + "."
        )
        if "aggregate" in options:
            answer += _unread_left(draft, world, len(archive))
        draft.reference.answer(answer)
        _checks(draft, archive, customer_mail, urgent)
        if "follow_up" in options:
            _reply_urgent(draft, world, urgent[0])
        return draft


def _policy(world: World, customer: str, domain: str) -> dict[str, Any]:
    content = (
        "Triage rules for unread inbox mail:\n1. Newsletters (sender news@...) go to the archive "
        f"folder.\n2. Mail from customers ({customer}, @{domain}) gets the label 'customer'.\n3. Mail "
        "with URGENT in the subject gets the label 'urgent'.\n4. Never delete mail or move it to "
        "trash.\nLeave everything else as it is."
    )
    doc = {"path": "/Policies/Email triage", "title": "Email triage policy", "updated": world.day(-60)}
    return world.add("documents", "documents", {**doc, "content": content})


def _inbox(world: World, customer: str, domain: str) -> tuple[Mail, Mail, Mail]:
    """Unread newsletters, customer mail and an urgent mail from the boss, among noise and read mail."""
    rng = world.rng
    archive = [
        world.mail(f"news@{world.fake.domain_word()}.com", s, world.fake.paragraph(), world.day(-rng.randrange(1, 4)))
        for s in rng.sample(NEWSLETTERS, rng.randrange(1, 3))
    ]
    customer_mail = []
    for _ in range(rng.randrange(1, 3)):
        who = world.person(company=customer, domain=domain)
        subject = f"Question from {customer}"
        customer_mail.append(world.mail(who.email, subject, world.fake.sentence(), world.day(-rng.randrange(1, 4))))
    subject = f"URGENT: {world.fake.catch_phrase()}"
    urgent = [world.mail(world.boss.email, subject, "Please look today.", world.day(-1))]
    world.noise_mail(rng.randrange(1, 3))
    world.mail(f"news@{world.fake.domain_word()}.com", "Old digest", "Read already.", world.day(-20), unread=False)
    return archive, customer_mail, urgent


def _triage(draft: Draft, archive: Mail, customer_mail: Mail, urgent: Mail) -> None:
    """Read the policy, list the unread mail, then archive and label by the rules."""
    ref = draft.reference
    ref.call("documents_search", {"query": "email triage policy"}, save_as="doc")
    ref.call("documents_read", {"document_id": "${doc.documents[0].id}"})
    ref.call("mail_search", {"folder": "inbox", "unread": True, "limit": 50})
    for m in archive:
        ref.call("mail_move", {"message_id": m["id"], "folder": "archive"})
    for m in customer_mail:
        ref.call("mail_label", {"message_id": m["id"], "label": "customer"})
    for m in urgent:
        ref.call("mail_label", {"message_id": m["id"], "label": "urgent"}, role="main")


def _late_urgent(draft: Draft, world: World) -> dict[str, Any]:
    """The ``dynamic`` option: an urgent mail arrives once labelling starts; it must be labelled too."""
    late = {
        "id": "msg-x1",
        "sender": world.boss.email,
        "to": [world.me.email],
        "date": world.day(0),
        "subject": "URGENT: numbers for the board deck",
        "body": "Need them within the hour.",
    }
    insert = {"service": "mail", "collection": "messages", "op": "insert", "record": late}
    draft.events.append(
        {"id": "late-urgent", "on_tool": "mail_label", "notify": "New mail just arrived.", "mutations": [insert]}
    )
    say = "A new message just arrived; triaging it too."
    draft.reference.call("mail_search", {"folder": "inbox", "unread": True}, save_as="new", say=say)
    draft.reference.call("mail_label", {"message_id": "${new.messages[0].id}", "label": "urgent"})
    draft.summary.append(str(late["subject"]))
    return late


def _unread_left(draft: Draft, world: World, archived: int) -> str:
    """The ``aggregate`` option: how many unread messages remain in the inbox."""
    draft.reference.call("mail_search", {"folder": "inbox", "unread": True}, save_as="left")
    messages = world.fixtures["mail"]["messages"]
    unread = sum(1 for m in messages if m.get("unread", True) and m.get("folder", "inbox") == "inbox")
    question = "Then tell me how many unread messages are left in the inbox."
    draft.ask_figure(question, "left_told", unread - archived + len(draft.events), label="unread message")
    return " ${left.total} unread messages remain in the inbox."


def _checks(draft: Draft, archive: Mail, customer_mail: Mail, urgent: Mail) -> None:
    for m in archive:
        draft.checks.field_equals(f"archived_{m['id']}", "mail", "messages", m["id"], "folder", "archive")
    for label, mails in (("customer", customer_mail), ("urgent", urgent)):
        for m in mails:
            late = "event" if m["id"] == "msg-x1" else None  # all that ignoring the new mail misses
            labelled = field("id").eq(m["id"]) & field("labels").has(label)
            draft.checks.record_exists(f"{label}_{m['id']}", "mail", "messages", labelled, group=late)
    touched = [m["id"] for m in archive + customer_mail + urgent]
    allow = field("id").in_(touched) | field("folder").eq("sent")
    draft.checks.unchanged("mail_guard", "mail", "messages", allow, 2.0)
    draft.checks.answer_contains("told_urgent", [urgent[0]["subject"]])


def _reply_urgent(draft: Draft, world: World, first: dict[str, Any]) -> None:
    """The ``follow_up`` option: reply to the first urgent mail."""
    boss = world.boss
    body = "I'm on it and will send you an update by 5pm."
    draft.add_follow_up(
        f"Thanks! Reply to the urgent one from {boss.first} that I'm on it and will send an update by 5pm.",
        [{"call": "mail_reply", "args": {"message_id": first["id"], "body": body}}],
        f"I replied to {boss.first}.",
    )
    replied = field("in_reply_to").eq(first["id"]) & field("body").contains("5pm")
    draft.checks.record_exists("replied_urgent", "mail", "messages", replied, group="follow_up")
