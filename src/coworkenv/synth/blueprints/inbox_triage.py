"""Inbox triage under a policy: archive newsletters, label customer and urgent mail, never delete."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft
from coworkenv.synth.world import World

NEWSLETTERS = ("Weekly digest", "Product news", "Webinar invitation", "Industry roundup")


class InboxTriage(Blueprint):
    name = "inbox_triage"
    summary = "triage the unread inbox by the written triage policy: archive, label customer and urgent mail"
    capabilities = ("workflow_compliance",)
    options: ClassVar[frozenset[str]] = frozenset({"dynamic", "aggregate", "follow_up"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        customer, domain = world.customer()
        policy = world.add(
            "documents",
            "documents",
            {
                "path": "/Policies/Email triage",
                "title": "Email triage policy",
                "updated": world.day(-60),
                "content": "Triage rules for unread inbox mail:\n1. Newsletters (sender news@...) go to the archive "
                f"folder.\n2. Mail from customers ({customer}, @{domain}) gets the label 'customer'.\n3. Mail "
                "with URGENT in the subject gets the label 'urgent'.\n4. Never delete mail or move it to "
                "trash.\nLeave everything else as it is.",
            },
        )
        archive, customer_mail, urgent = [], [], []
        for subject in rng.sample(NEWSLETTERS, rng.randrange(1, 3)):
            archive.append(
                world.mail(
                    f"news@{world.fake.domain_word()}.com",
                    subject,
                    world.fake.paragraph(),
                    world.day(-rng.randrange(1, 4)),
                )
            )
        for _ in range(rng.randrange(1, 3)):
            who = world.person(company=customer, domain=domain)
            customer_mail.append(
                world.mail(
                    who.email, f"Question from {customer}", world.fake.sentence(), world.day(-rng.randrange(1, 4))
                )
            )
        boss = world.boss
        urgent.append(
            world.mail(boss.email, f"URGENT: {world.fake.catch_phrase()}", "Please look today.", world.day(-1))
        )
        world.noise_mail(rng.randrange(1, 3))
        world.mail(f"news@{world.fake.domain_word()}.com", "Old digest", "Read already.", world.day(-20), unread=False)
        steps: list[dict] = [
            {"call": "documents_search", "args": {"query": "email triage policy"}, "save_as": "doc"},
            {"call": "documents_read", "args": {"document_id": "${doc.documents[0].id}"}},
            {"call": "mail_search", "args": {"folder": "inbox", "unread": True, "limit": 50}},
        ]
        steps += [{"call": "mail_move", "args": {"message_id": m["id"], "folder": "archive"}} for m in archive]
        steps += [{"call": "mail_label", "args": {"message_id": m["id"], "label": "customer"}} for m in customer_mail]
        steps += [
            {"call": "mail_label", "args": {"message_id": m["id"], "label": "urgent"}, "_main": True} for m in urgent
        ]
        draft = Draft(
            blueprint=self.name,
            title="Triage the inbox",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "Please triage my unread inbox following our email triage policy document.",
                "My inbox is a mess. Go through the unread mail and apply the email triage policy we have in the "
                "documents.",
                "Can you do the inbox triage? The rules are in the email triage policy doc. Only unread mail.",
            ],
            facts={},
            reference=steps,
            checks=[],
            capabilities=set(self.capabilities),
            policies=[
                {
                    "id": "never-delete",
                    "tool": "mail_move",
                    "rule": "forbid",
                    "when": "args.folder == 'trash'",
                    "description": "Never delete mail: do not move any message to trash.",
                }
            ],
            readable=[
                ("documents", "documents", policy["id"], "content"),
                ("mail", "messages", customer_mail[0]["id"], "body"),
            ],
            summary=[m["subject"] for m in urgent],
        )
        if "dynamic" in options:
            late = {
                "id": "msg-x1",
                "sender": boss.email,
                "to": [world.me.email],
                "date": world.day(0),
                "subject": "URGENT: numbers for the board deck",
                "body": "Need them within the hour.",
            }
            draft.events.append(
                {
                    "id": "late-urgent",
                    "on_tool": "mail_label",
                    "notify": "New mail just arrived.",
                    "mutations": [{"service": "mail", "collection": "messages", "op": "insert", "record": late}],
                }
            )
            steps += [
                {
                    "call": "mail_search",
                    "args": {"folder": "inbox", "unread": True},
                    "save_as": "new",
                    "say": "A new message just arrived; triaging it too.",
                },
                {"call": "mail_label", "args": {"message_id": "${new.messages[0].id}", "label": "urgent"}},
            ]
            urgent.append(late)
            draft.summary.append(late["subject"])
        answer = (
            f"Archived {len(archive)} newsletter(s), labelled {len(customer_mail)} customer mail(s) and "
            f"{len(urgent)} urgent one(s): " + "; ".join(m["subject"] for m in urgent) + "."
        )
        if "aggregate" in options:
            steps.append({"call": "mail_search", "args": {"folder": "inbox", "unread": True}, "save_as": "left"})
            left = sum(
                1
                for m in world.fixtures["mail"]["messages"]
                if m.get("unread", True) and m.get("folder", "inbox") == "inbox"
            ) - len(archive)
            answer += " ${left.total} unread messages are left in the inbox."
            draft.ask_figure(
                "Then tell me how many unread messages are left in the inbox.", "left_told", left + len(draft.events)
            )
        steps.append({"answer": answer})
        for m in archive:
            draft.check(
                "field_equals",
                f"archived_{m['id']}",
                1.0,
                service="mail",
                collection="messages",
                record_id=m["id"],
                field="folder",
                value="archive",
            )
        for label, group in (("customer", customer_mail), ("urgent", urgent)):
            for m in group:
                late = {"_group": "event"} if m["id"] == "msg-x1" else {}  # all that ignoring the new mail misses
                draft.check(
                    "record_exists",
                    f"{label}_{m['id']}",
                    1.0,
                    service="mail",
                    collection="messages",
                    where=f"r.id == '{m['id']}' and '{label}' in r.labels",
                    **late,
                )
        touched = [m["id"] for m in archive + customer_mail + urgent]
        draft.check(
            "unchanged",
            "mail_guard",
            2.0,
            service="mail",
            collection="messages",
            allow=f"r.id in {touched} or r.folder == 'sent'",
        )
        draft.check("answer_contains", "told_urgent", 1.0, values=[urgent[0]["subject"]])
        if "follow_up" in options:
            first = urgent[0]
            draft.add_follow_up(
                f"Thanks! Reply to the urgent one from {boss.first} that I'm on it and will send an update by 5pm.",
                [
                    {
                        "call": "mail_reply",
                        "args": {"message_id": first["id"], "body": "I'm on it and will send you an update by 5pm."},
                    }
                ],
                f"I replied to {boss.first}.",
            )
            draft.check(
                "record_exists",
                "replied_urgent",
                1.0,
                service="mail",
                collection="messages",
                where=f"r.in_reply_to == '{first['id']}' and contains(r.body, '5pm')",
                _group="follow_up",
            )
        return draft
