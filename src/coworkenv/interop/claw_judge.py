"""Claw-Eval's LLM-judge components, scored by any OpenAI-compatible endpoint.

The judge sees what Claw-Eval's judge sees (the task prompt, the conversation's text, the
actions taken, the rubric: the component's description with the task's ``judge_rubric``),
in the prompt templates ``templates/claw_judge*.md``, and answers a number in [0, 1]
(``{"score": x}`` or a bare number). Transient endpoint failures are retried with backoff by
the project's LLM client, a dead or refusing endpoint raises ``EndpointError``, and a reply
without a score in [0, 1] is asked again a bounded number of times, then raises
:class:`JudgeError`. Every judgment is kept in an audit file, one JSON line each, keyed by
the trajectory's digest, the component and the rubric: the same trajectory is never judged
twice, and a rerun over the same audit file gives the same scores.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

from coworkenv.bank.llm.client import LLMClient
from coworkenv.prompt_files import package_template
from coworkenv.runtime.calls import NOTICE
from coworkenv.trajectory import Trajectory

SCORE_KEY = re.compile(r'"score"\s*:\s*"?(-?[0-9]+(?:\.[0-9]+)?)')
BARE_NUMBER = re.compile(r"^\s*(-?[0-9]+(?:\.[0-9]+)?)\s*$")


class JudgeError(RuntimeError):
    """The judge answered, but not with a score: the run must stop rather than count a guess."""


def parse_score(text: str) -> float | None:
    """The score in a judge's reply (a JSON ``score`` field, or the reply is one number), None when there is no
    number in [0, 1]."""
    cleaned = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
    match = SCORE_KEY.search(cleaned) or BARE_NUMBER.match(cleaned)
    if match is None:
        return None
    value = float(match.group(1))
    return value if math.isfinite(value) and 0.0 <= value <= 1.0 else None


def _text(content: object) -> str:
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def conversation(traj: Trajectory, phase: str = "all") -> str:
    """The user's and the assistant's words, one ``[ROLE]: text`` line each (tool traffic left out).

    ``phase="clarification"`` keeps what Claw-Eval's multi-turn graders show the clarification judge: the
    conversation up to the user's last reply (the opening request is no reply); empty when the user never
    replied, as when the agent asked nothing."""
    messages = traj.messages
    if phase == "clarification":
        replies = [i for i, m in enumerate(messages) if m.get("role") == "user" and _is_reply(m)]
        messages = messages[: replies[-1] + 1] if len(replies) > 1 else []
    lines = []
    for message in messages:
        role, text = message.get("role"), _text(message.get("content")).strip()
        if role in ("user", "assistant") and text:
            lines.append(f"[{str(role).upper()}]: {text}")
    return "\n".join(lines)


def _is_reply(message: dict[str, object]) -> bool:
    """A user message that the user said (the opening or a reply), not an environment notice."""
    return not _text(message.get("content")).startswith(NOTICE)


def actions(traj: Trajectory) -> str:
    """Every tool call with its arguments and whether it ran."""
    lines = [
        f"{c.tool}({json.dumps(c.args or {}, ensure_ascii=False, sort_keys=True)}) -> "
        + ("ok" if c.ok else f"error: {c.error or 'failed'}")
        for c in traj.calls
    ]
    return "\n".join(lines) or "(no tool calls)"


def digest(traj: Trajectory) -> str:
    """What the judge is shown of a trajectory, hashed: equal digests get equal judgments."""
    shown = {"messages": conversation(traj), "actions": actions(traj)}
    return hashlib.sha256(json.dumps(shown, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def rubric_text(component: dict[str, object], task_rubric: str) -> str:
    """The rubric a component is judged by: its description, then the task's rubric."""
    parts = [f"Component: {component['name']}. {component.get('description') or ''}".strip()]
    if component.get("rubric"):  # the grader's own rubric for this component
        parts.append(str(component["rubric"]))
    if task_rubric:
        parts.append(f"Task rubric: {task_rubric}")
    return "\n\n".join(parts)


class Judge:
    """Judgments through ``openai:<model>@<url>``, cached in (and reloaded from) the audit file ``audit``."""

    def __init__(
        self, spec: str, audit: Path, *, attempts: int = 3, client: LLMClient | None = None, **client_options: Any
    ):
        self.client = client or LLMClient(spec, temperature=0.0, max_tokens=1024, **client_options)
        self.model = str(self.client.model)
        self.audit = audit
        self.attempts = attempts
        self.cache: dict[str, float] = {}
        if audit.exists():
            for line in audit.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                self.cache[entry["key"]] = float(entry["score"])

    def score(
        self, traj: Trajectory, task: str, component: dict[str, object], task_rubric: str, phase: str = "all"
    ) -> float:
        """One component's score for one trajectory (judged once, then read from the cache); ``phase`` is the part
        of the conversation the judge sees (:func:`conversation`), whose digest equal trajectories share."""
        rubric = rubric_text(component, task_rubric)
        key = hashlib.sha256(f"{self.model}\n{digest(traj)}\n{component['name']}\n{rubric}".encode()).hexdigest()
        if key in self.cache:
            return self.cache[key]
        user = package_template("coworkenv.interop", "claw_judge").substitute(
            task=task, conversation=conversation(traj, phase) or "(empty)", actions=actions(traj), rubric=rubric
        )
        messages = [
            {"role": "system", "content": package_template("coworkenv.interop", "claw_judge_system").template},
            {"role": "user", "content": user},
        ]
        replies = []
        for attempt in range(self.attempts):
            reply = self.client.complete(messages, seed=attempt).content
            replies.append(reply)
            value = parse_score(reply)
            if value is not None:
                break
        else:
            raise JudgeError(
                f"judge {self.model}: no score in [0, 1] in {self.attempts} replies about {component['name']} "
                f"of {traj.spec_id}; last reply: {replies[-1][:200]!r}"
            )
        entry = {
            "key": key,
            "spec_id": traj.spec_id,
            "sample": traj.sample,
            "component": component["name"],
            "model": self.model,
            "rubric": rubric,
            "score": value,
            "replies": replies,
        }
        with self.audit.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
        self.cache[key] = value
        return value
