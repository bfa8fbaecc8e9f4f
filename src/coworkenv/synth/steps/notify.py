"""notify: tell colleagues what happened: on a chat channel, by direct message, by mail or in the account notes.

The message must name the customer (and the chain's key result when it has one); the
channels the request does not name are decoys.
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.draft import stated
from coworkenv.synth.expr_builder import Expr, field
from coworkenv.synth.steps.base import Chain, Step

TOPICS = ("renewals and upsell", "customer escalations", "quarterly numbers", "vendor payments", "team news")
CHANNELS = ("support-escalations", "account-team", "cs-leads", "sales-updates", "customer-health")


def _text(chain: Chain) -> tuple[Expr, str]:
    """What a chat notice must contain (a condition on its ``text``) and the text the reference writes."""
    company = chain.subject
    key = chain.key()
    if key is None:
        return field("text").contains(company), f"Update on {company}: follow-up done."
    return field("text").contains(company) & field("text").contains(key[0]), f"Update on {company}: {key[1]}."


class PostChannel(Step):
    """A post on the team channel the request names."""

    kind = "notify"
    name = "notify_channel"
    gives: ClassVar[tuple[str, ...]] = ("channel",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        names = world.rng.sample(CHANNELS, 3)
        for name in names:
            world.add("chat", "channels", {"name": name, "members": [world.me.email], "topic": world.fake.bs()})
        world.ensure("chat", "messages")
        chain.facts["channel"] = stated("channel", names[0], given=f"#{names[0]}")
        said, text = _text(chain)
        posted = ("posted", field("channel").eq(names[0]) & said)
        chain.write("chat_post_message", {"channel": names[0], "text": text}, "messages", posted, field("ts").eq("now"))
        chain.bind("channel", {"name": names[0]}, names[0], "chat")
        chain.clause("post an update in {channel}", "let {channel} know", "share a short update in {channel}")


class TopicChannel(Step):
    """A post on the channel whose topic the request names (the channel list tells which one it is).

    The reference posts to it by name: a realistic workspace's other channels sort among these, so no place in
    the list is the channel's."""

    kind = "notify"
    name = "notify_topic_channel"
    gives: ClassVar[tuple[str, ...]] = ("channel",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        names = sorted(world.rng.sample(CHANNELS, 3))
        topics = world.rng.sample(TOPICS, 3)
        for name, topic in zip(names, topics, strict=True):
            world.add("chat", "channels", {"name": name, "members": [world.me.email], "topic": topic})
        world.ensure("chat", "messages")
        pick = world.rng.randrange(3)
        chain.facts["topic"] = stated("topic", topics[pick])
        said, text = _text(chain)
        chain.call("chat_list_channels", {}, save_as="channels")
        posted = ("posted_topic", field("channel").eq(names[pick]) & said)
        args = {"channel": names[pick], "text": text}
        chain.write("chat_post_message", args, "messages", posted, field("ts").eq("now"))
        chain.bind("channel", {"name": names[pick]}, args["channel"], "chat")
        chain.clause(
            "post an update on the channel about {topic}",
            "let the {topic} channel know",
            "share a short update in whichever channel covers {topic}",
        )


class DmOwner(Step):
    """A direct message to the account owner."""

    kind = "notify"
    name = "notify_dm"
    needs: ClassVar[tuple[str, ...]] = ("account", "owner")

    def apply(self, chain: Chain) -> None:
        chain.world.ensure("chat", "channels", "messages")
        owner = chain.need("owner")
        said, text = _text(chain)
        told = ("told_owner", field("channel").eq(f"dm:{owner.record['email']}") & said)
        chain.write("chat_send_dm", {"user": owner.ref, "text": text}, "messages", told, field("ts").eq("now"))
        chain.clause(
            "message the account owner on chat", "ping their account manager directly", "DM the account's owner"
        )


class MailOwner(Step):
    """A mail to the account owner."""

    kind = "notify"
    name = "notify_mail"
    needs: ClassVar[tuple[str, ...]] = ("account", "owner")

    def apply(self, chain: Chain) -> None:
        chain.world.ensure("mail", "messages")
        owner = chain.need("owner")
        company = chain.need("account").record["name"]
        _, text = _text(chain)
        sent = field("folder").eq("sent")
        mailed = ("mailed_owner", sent & field("to").has(owner.record["email"]) & field("subject").contains(company))
        args = {"to": [owner.ref], "subject": f"{company} update", "body": text}
        chain.write("mail_send", args, "messages", mailed, sent)
        chain.clause(
            "email the account owner about it", "send the account manager a note by mail", "mail the account's owner"
        )


class AccountNotes(Step):
    """A line appended to the account's notes document (the look-alike accounts have notes of their own); the check
    counts the ticket (or the customer) the line names, so a line appended twice fails."""

    kind = "notify"
    name = "notify_notes"
    needs: ClassVar[tuple[str, ...]] = ("account",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        target = chain.need("account").record
        docs = {}
        for account in (target, *chain.decoys):
            title = f"{account['name']} account notes"
            doc = {"path": f"/Accounts/{title}", "title": title, "content": f"Notes on {account['name']}.\n"}
            docs[account["id"]] = world.add("documents", "documents", doc | {"updated": world.day(-5)})
        mine = docs[target["id"]]["id"]
        _, text = _text(chain)
        key = chain.key()
        chain.call("documents_search", {"query": f"{target['name']} notes"}, save_as="notes")
        content = field("content")
        wrote = field("id").eq(mine) & content.startswith(docs[target["id"]]["content"])  # nothing lost
        if key is not None:
            wrote = wrote & content.contains(key[0])
        if "ticket" in chain.bound:  # the line names the ticket once: appended twice, it names it twice
            wrote = wrote & content.count(key[0] if key else "").eq(1)
        else:  # the notes name the customer in their first line; the line added names them once more
            wrote = wrote & content.count(target["name"]).eq(2)
        args = {"document_id": "${notes.documents[0].id}", "text": text}
        chain.write("documents_append", args, "documents", ("noted", wrote), field("id").eq(mine))
        chain.clause(
            "add a line about them to their account notes doc",
            "note the outcome for them in the account notes document",
            "update their notes document with a line on them",
        )


NOTIFY: tuple[Step, ...] = (PostChannel(), TopicChannel(), DmOwner(), MailOwner(), AccountNotes())
