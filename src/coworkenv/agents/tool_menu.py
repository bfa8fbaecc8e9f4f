"""Which tools an episode offers a small model: ``all``, ``spec`` or ``spec+N``.

A 270M model reading thirty tool signatures before every turn spends most of its context on
tools it will never call. ``spec`` offers only the tools the spec mentions (its reference
solution's calls, the tools its checks, rules, events and faults name — so a forbidden
tool stays visible and a safety check stays meaningful); ``spec+N`` adds N distractors
drawn, seeded by the spec id, from the other tools of its services, so choosing the right
tool is still a choice. The menu is applied to the spec itself (its ``tools`` field), so the
environment exposes exactly what the prompt shows, and SFT demonstrations recorded on the
narrowed spec render the same way evaluation prompts do.
"""

from __future__ import annotations

import random
import re

from coworkenv.runtime.router import exposed_tools
from coworkenv.spec.models import TaskSpec

_TOOL_KEYS = ("call", "tool", "prior_tool", "on_tool")
_MENU = re.compile(r"^(all|spec)(?:\+(\d+))?$")


def parse_menu(text: str) -> tuple[str, int]:
    """``all`` -> ("all", 0); ``spec`` -> ("spec", 0); ``spec+3`` -> ("spec", 3)."""
    m = _MENU.match(text.strip())
    if not m or (m.group(1) == "all" and m.group(2)):
        raise ValueError(f"--tools: expected all | spec | spec+N, got {text!r}")
    return m.group(1), int(m.group(2) or 0)


def mentioned_tools(spec: TaskSpec) -> set[str]:
    """Every exposed tool the spec names anywhere (reference calls, checks, rules, events, faults)."""
    offered = exposed_tools(list(spec.services), spec.tools, spec.declared_services)
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in _TOOL_KEYS and isinstance(value, str) and value in offered:
                    found.add(value)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(spec.model_dump(mode="json", exclude={"services"}))
    return found


def narrow_tools(spec: TaskSpec, menu: str) -> TaskSpec:
    """The spec with its exposed tools cut to the menu (``all`` returns it unchanged)."""
    kind, extra = parse_menu(menu)
    if kind == "all":
        return spec
    offered = list(exposed_tools(list(spec.services), spec.tools, spec.declared_services))
    used = mentioned_tools(spec)
    others = [t for t in offered if t not in used]
    distractors = set(random.Random(spec.id).sample(others, min(extra, len(others))))
    keep = [t for t in offered if t in used or t in distractors]  # the service order, so position tells nothing
    return spec.model_copy(update={"tools": keep})
