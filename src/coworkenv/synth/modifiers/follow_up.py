"""multi_turn: a second request once the first is reported done.

Blueprints with a natural follow-up offer it as the ``follow_up`` option; elsewhere the
generic one applies: pass the outcome on to the user's manager in a chat message.
"""

from __future__ import annotations

from coworkenv.synth.draft import Draft
from coworkenv.synth.modifiers.base import Modifier
from coworkenv.synth.world import World


def notify_manager(draft: Draft, world: World) -> bool:
    if not draft.summary:
        return False
    boss = world.boss
    world.ensure("chat", "channels", "messages")
    draft.follow_ups.append(world.rng.choice((
        f"Thanks! Could you also send {boss.name} ({boss.email}) a chat message with the outcome?",
        f"Great. Please let {boss.first} know on chat (direct message to {boss.email}) what you set up.",
        f"One more thing: DM {boss.name} at {boss.email} a short update with the details.",
    )))
    text = f"Update from {world.me.first}: {draft.title}: " + ", ".join(draft.summary) + "."
    draft.reference += [
        {"call": "chat_send_dm", "args": {"user": boss.email, "text": text}},
        {"answer": f"I sent {boss.first} a direct message with the details."},
    ]
    where = " and ".join([f"r.channel == 'dm:{boss.email}'", *(f"contains(r.text, '{v}')" for v in draft.summary)])
    draft.check("record_exists", "follow_up_sent", 1.0, service="chat", collection="messages", where=where,
                _group="follow_up")
    return True


MODIFIER = Modifier("follow_up", "multi_turn", "stop_before_follow_up", option="follow_up", edit=notify_manager,
                    fallback=True)
