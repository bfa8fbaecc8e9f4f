"""Solvability: every value the reference passes to a tool is one the agent could know.

Walks the reference run's conversation in order; each argument of each call — text,
identifiers, numbers and dates alike — must appear in what the agent had been *told*
before making it: the system prompt, the tool schemas, the user's messages and earlier
tool results. Values are compared normalised (``coworkenv.values``): "$1,200" states 1200,
and "tomorrow" or "next Friday" state a date once the workspace clock (the context's
"Today is …") is known, so dates computed from today are solvable.

What the agent wrote itself does not count: a value that first appears in the agent's
own messages or call arguments, and only later in a user reply (an answer to its own
suggestion) or in a tool result that reads back what it wrote (a note it saved), was
never learned. A value a tool returns from the fixtures counts whenever it is returned,
even after the agent guessed it (a search for the name it then finds).

Exempt: free-text arguments the agent composes (bodies, titles, summaries, queries),
paging controls (limit, offset) and the time of day of a date-time (often computed: an
end from a start and a duration, a whole day as 00:00–23:59).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date

from coworkenv.runtime.policy import Messages, Tools
from coworkenv.runtime.workspace import State
from coworkenv.values import Key, clock, forms, kinds_of, mentions, numbers_in
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
CONTROLS = frozenset({"limit", "offset", "page", "page_size", "max_results"})
_DELIMITER = re.compile(r'[\s"]')
_WINDOW = 40
_DATETIME = re.compile(r"^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}")


@dataclass
class _Text:
    """One thing in the conversation, and who wrote it."""

    raw: str
    by_agent: bool
    today: date | None
    low: str = ""
    """``raw`` lowercased (computed when not given)."""
    from_tool: bool = False
    _keys: dict[frozenset[str], set[Key]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.low = self.low or self.raw.lower()

    def states(self, value: str | float, alternatives: list[frozenset[Key]]) -> bool:
        if isinstance(value, str) and value.lower() in self.low:
            return True
        if not alternatives:
            return False
        if not isinstance(value, str) and "hour" not in self.low:
            return self._states_number(float(value))
        kinds = kinds_of(alternatives)
        if kinds not in self._keys:  # parsed once per text and kind of value, only when needed
            self._keys[kinds] = mentions(self.raw, self.today, kinds)
        return any(alt <= self._keys[kinds] for alt in alternatives)

    def _states_number(self, value: float) -> bool:
        """Parse only around the places that hold the number's last three digits (every written form does)."""
        tail = str(int(abs(value)))[-3:]
        for m in re.finditer(re.escape(tail), self.raw):
            lo, hi = max(0, m.start() - _WINDOW), m.end() + _WINDOW
            if lo > 0:  # whole tokens only: start after a delimiter, end before one
                lo = min((d.end() for d in _DELIMITER.finditer(self.raw, lo, m.start())), default=m.start())
            if hi < len(self.raw):
                ends = [d.start() for d in _DELIMITER.finditer(self.raw, m.end(), hi)]
                hi = ends[-1] if ends else hi
            if any(abs(x - value) < 0.005 for x in numbers_in(self.raw[lo:hi])):
                return True
        return False


def _leaves(value: object, key: str = "") -> list[tuple[str, str | float]]:
    """(argument name, value) pairs that must be known; free text, controls and booleans skipped."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, k)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v, key)]
    if key in FREE_TEXT or key in CONTROLS or isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [(key, value)]
    if isinstance(value, str) and value.strip():
        m = _DATETIME.match(value)
        return [(key, m.group(1))] if m else [(key, value)]
    return []


def _learned(value: str | float, texts: list[_Text], fixtures: _Fixtures) -> bool:
    """Told to the agent before the agent itself first wrote it, or returned by a tool from the fixtures."""
    alternatives = forms(value, names=False)
    guessed = False
    for text in texts:
        if not text.states(value, alternatives):
            continue
        if not (guessed or text.by_agent):
            return True
        guessed = True
        if text.from_tool and fixtures.states(value, alternatives):
            return True
    return False


class _Fixtures:
    """The initial records as text, encoded only when a value the agent guessed is later returned by a tool."""

    def __init__(self, state: State | None) -> None:
        self._state = state
        self._text: _Text | None = None

    def states(self, value: str | float, alternatives: list[frozenset[Key]]) -> bool:
        if self._state is None:
            return False
        if self._text is None:
            self._text = _Text(json.dumps(self._state, ensure_ascii=False, sort_keys=True, default=str), False, None)
        return self._text.states(value, alternatives)


def _functions(msg: Mapping[str, object]) -> list[Mapping[str, object]]:
    """The ``function`` parts of a transcript message's tool calls (name and arguments text)."""
    calls = msg.get("tool_calls")
    found = [c.get("function") for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
    return [fn if isinstance(fn, dict) else {} for fn in found]


def _authored(msg: Mapping[str, object]) -> str:
    parts = [str(msg.get("content") or "")]
    parts += [str(fn.get("arguments") or "") for fn in _functions(msg)]
    return "\n".join(parts)


_MENUS: dict[int, tuple[Tools, str, str]] = {}


def _menu_text(tools: Tools) -> tuple[str, str]:
    """The tool schemas as the agent reads them, and lowercased; encoded once per list (environments of one spec
    shape share their read-only schema list, see :func:`~coworkenv.runtime.router.schema_list`)."""
    hit = _MENUS.get(id(tools))
    if hit is None or hit[0] is not tools:
        if len(_MENUS) >= 256:
            _MENUS.clear()
        raw = json.dumps(tools, ensure_ascii=False)
        hit = _MENUS[id(tools)] = (tools, raw, raw.lower())
    return hit[1], hit[2]


def unsolvable_findings(
    messages: Messages,
    tools: Tools,
    fixtures: State | None = None,
    canonical: Callable[[str, dict[str, object]], dict[str, object]] | None = None,
) -> list[Finding]:
    """Values in the reference's tool calls the agent was not told before it needed (or wrote) them, nor read
    from ``fixtures`` (the initial records) through a tool. ``canonical`` gives a call's arguments under the
    tool's own names (the environment's interface may show others), which say what is free text."""
    today = clock(next((str(m.get("content") or "") for m in messages if m.get("role") == "system"), ""))
    raw, low = _menu_text(tools)
    texts = [_Text(raw, False, today, low)]
    initial = _Fixtures(fixtures)
    out: list[Finding] = []
    calls = 0
    for msg in messages:
        role = msg.get("role")
        if role != "assistant":
            if role in ("system", "user", "tool"):  # "tomorrow" in a mail is relative to the mail, not today
                tool = role == "tool"
                texts.append(_Text(str(msg.get("content") or ""), False, None if tool else today, from_tool=tool))
            continue
        for fn in _functions(msg):
            calls += 1
            try:
                args = json.loads(str(fn.get("arguments") or "{}"))
            except json.JSONDecodeError:
                continue
            if canonical is not None and isinstance(args, dict):
                args = canonical(str(fn.get("name")), args)
            for key, value in _leaves(args):
                if not _learned(value, texts, initial):
                    out.append(
                        Finding(
                            kind="unsolvable",
                            where=f"reference call {calls} ({fn.get('name')}).{key}",
                            evidence=f"{value!r} appears nowhere the agent was told before this call "
                            "(values the agent wrote itself first do not count)",
                            hint="state it in the request, a hidden fact or a fixture the agent can read",
                        )
                    )
        texts.append(_Text(_authored(msg), True, today))
    return out
