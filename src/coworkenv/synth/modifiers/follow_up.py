"""multi_turn: a second request once the first is reported done.

Blueprints with a natural follow-up offer it as the ``follow_up`` option; elsewhere the
generic one applies: pass the outcome on to a colleague in a chat message (a colleague the
main task never messages, so only the follow-up can satisfy its check).
"""

from __future__ import annotations

from coworkenv.synth.draft import Draft
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.modifiers.base import Modifier
from coworkenv.synth.world import World


def notify_colleague(draft: Draft, world: World) -> bool:
    if not draft.summary:
        return False
    peer = world.person(world.me.department)
    world.ensure("chat", "channels", "messages")
    message = world.rng.choice(
        (
            f"Thanks! Could you also send {peer.name} ({peer.email}) a chat message with the outcome?",
            f"Great. Please let {peer.first} know on chat (direct message to {peer.email}) what you set up.",
            f"One more thing: DM {peer.name} at {peer.email} a short update with the details.",
        )
    )
    text = f"Update from {world.me.first}: {draft.title}: " + ", ".join(draft.summary) + "."
    draft.add_follow_up(
        message,
        [{"call": "chat_send_dm", "args": {"user": peer.email, "text": text}}],
        f"I sent {peer.first} a direct message with the details.",
    )
    where = and_(field("channel").eq(f"dm:{peer.email}"), *(field("text").contains(v) for v in draft.summary))
    draft.checks.record_exists("follow_up_sent", "chat", "messages", where, group="follow_up")
    return True


MODIFIER = Modifier(
    "follow_up", "multi_turn", "stop_before_follow_up", option="follow_up", edit=notify_colleague, fallback=True
)
