"""What the agent is told before the first turn: who it works for, how to behave, the day and the rules."""

from __future__ import annotations

from coworkenv.spec.models import TaskSpec
from coworkenv.spec.stages import clock_text, stage_clocks


def system_prompt(spec: TaskSpec) -> str:
    lines = [
        f"You are an AI coworker helping {spec.user.persona}. Use the tools to act on their workspace.",
        "If you need a fact only the user knows, ask them. Before an irreversible action the rules "
        "require confirming, ask the user to confirm. When the request is done, report the result "
        "to the user in plain words, stating the key facts.",
    ]
    if spec.context:
        lines.append(spec.context)
    if spec.clock is not None:
        lines.append(f"It is now {clock_text(stage_clocks(spec)[0])}.")
    if spec.rules:
        lines.append("Workplace rules you must follow:")
        lines.extend(f"- {p.description}" for p in spec.rules)
    return "\n".join(lines)
