"""Solvability: every value the reference passes to a tool is one the agent could know.

Walks the reference run's conversation in order; each argument of each call must appear
in what the agent had seen before making it: the system prompt, the tool schemas, the
user's messages and earlier tool results. Free-text arguments the agent composes itself
(bodies, titles, summaries, queries), numbers and the time of day of a date-time (both may
be computed, e.g. an end time from a start and a duration) are exempt.
"""

from __future__ import annotations

import json
import re
from typing import Any

from coworkenv.verify.findings import Finding

FREE_TEXT = frozenset(
    {
        "subject",
        "body",
        "text",
        "summary",
        "description",
        "content",
        "title",
        "reason",
        "query",
        "location",
    }
)
_DATETIME = re.compile(r"^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}")


def _leaves(value: Any, key: str = "") -> list[tuple[str, str]]:
    """(argument name, string value) pairs that must be known; free text and non-strings skipped."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, k)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v, key)]
    if isinstance(value, str) and key not in FREE_TEXT and value.strip():
        m = _DATETIME.match(value)
        return [(key, m.group(1))] if m else [(key, value)]
    return []


def unsolvable_findings(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[Finding]:
    """Values in the reference's tool calls that nothing shown to the agent before contained."""
    seen = [json.dumps(tools, ensure_ascii=False).lower()]
    out: list[Finding] = []
    calls = 0
    for msg in messages:
        role = msg.get("role")
        if role == "assistant":
            for call in msg.get("tool_calls") or []:
                calls += 1
                fn = call.get("function", {})
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except json.JSONDecodeError:
                    continue
                known = "\n".join(seen)
                for key, value in _leaves(args):
                    if value.lower() not in known:
                        out.append(
                            Finding(
                                kind="unsolvable",
                                where=f"reference call {calls} ({fn.get('name')}).{key}",
                                evidence=f"{value!r} appears nowhere the agent could have seen before this call",
                                hint="state it in the request, a hidden fact or a fixture the agent can read",
                            )
                        )
        elif role in ("system", "user", "tool"):
            seen.append(str(msg.get("content") or "").lower())
    return out
