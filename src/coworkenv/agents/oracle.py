"""The oracle teacher: executes a spec's reference solution and talks like a colleague.

It emits one reference step per turn — a tool call, a clarifying question, a
confirmation request or a report — binding each tool result under its ``save_as`` name
so later steps can reference it, and retrying a call that hit a transient error.
"""

from __future__ import annotations

import json
from typing import Any

from coworkenv.expr import ExprError, render
from coworkenv.runtime.turn import AssistantTurn, ToolCall
from coworkenv.spec.models import AnswerStep, AskStep, CallStep, ConfirmStep, TaskSpec
from coworkenv.spec.stages import current_stage, stage_count, stage_view

MAX_RETRIES = 3
TRANSIENT_MARKERS = ("503", "temporar", "retry", "timeout", "unavailable")


def is_transient(content: str) -> bool:
    low = content.lower()
    return low.startswith('{"error"') and any(m in low for m in TRANSIENT_MARKERS)


def ask_text(spec: TaskSpec, slot: str, question: str | None) -> str:
    """The clarifying question for a slot: the step's own, the fact's, or a default."""
    fact = next((f for f in spec.user.hidden_facts if f.slot == slot), None)
    text = question or (fact.question if fact else "") or ""
    if not text:
        topic = fact.keywords[0] if fact else slot.replace("_", " ")
        text = f"Before I go on, could you tell me the {topic}?"
    return text if "?" in text else text + "?"


def confirm_text(text: str) -> str:
    low = text.lower()
    if "?" in text and any(w in low for w in ("confirm", "shall i", "should i", "go ahead", "proceed")):
        return text
    return text.rstrip(".") + ". Shall I go ahead?"


class OracleRun:
    """One episode of the oracle on one spec."""

    name = "oracle"

    def __init__(self, spec: TaskSpec, call_prefix: str = "call_") -> None:
        self.spec = spec
        self.call_prefix = call_prefix  # distinct per stage, so call ids stay unique in a multi-stage episode
        self.cursor = 0
        self.ctx: dict[str, Any] = {"facts": {}}
        self.pending: tuple[CallStep, ToolCall] | None = None
        self.retries = 0
        self.calls = 0

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        if self.pending is not None:
            retry = self._absorb_result(messages)
            if retry is not None:
                return retry
        if self.cursor >= len(self.spec.reference):
            return AssistantTurn(content="Everything you asked for is done.")
        step = self.spec.reference[self.cursor]
        self.cursor += 1
        try:
            return self._emit(step)
        except ExprError as exc:
            return AssistantTurn(content=f"I could not complete the task: {exc}.")

    def _emit(self, step: Any) -> AssistantTurn:
        if isinstance(step, CallStep):
            self.calls += 1
            call = ToolCall(id=f"{self.call_prefix}{self.calls}", name=step.call, arguments=render(step.args, self.ctx))
            self.pending = (step, call)
            self.retries = 0
            return AssistantTurn(content=render(step.say, self.ctx) if step.say else None, tool_calls=[call])
        if isinstance(step, AskStep):
            fact = next((f for f in self.spec.user.hidden_facts if f.slot == step.ask), None)
            if fact is not None:
                self.ctx["facts"][fact.slot] = fact.value
            return AssistantTurn(content=ask_text(self.spec, step.ask, step.question))
        if isinstance(step, ConfirmStep):
            return AssistantTurn(content=confirm_text(render(step.confirm, self.ctx)))
        assert isinstance(step, AnswerStep)
        return AssistantTurn(content=render(step.answer, self.ctx))

    def _absorb_result(self, messages: list[dict[str, Any]]) -> AssistantTurn | None:
        """Bind the pending call's result; return a retry turn after a transient error."""
        assert self.pending is not None
        step, call = self.pending
        content = next(
            (
                m.get("content", "")
                for m in reversed(messages)
                if m.get("role") == "tool" and m.get("tool_call_id") == call.id
            ),
            None,
        )
        if content is not None and is_transient(content) and self.retries < MAX_RETRIES:
            self.retries += 1
            self.calls += 1
            retry = ToolCall(id=f"{self.call_prefix}{self.calls}", name=call.name, arguments=call.arguments)
            self.pending = (step, retry)
            return AssistantTurn(content="That failed with a temporary error; trying again.", tool_calls=[retry])
        self.pending = None
        if step.save_as and content is not None:
            try:
                self.ctx[step.save_as] = json.loads(content)
            except json.JSONDecodeError:
                self.ctx[step.save_as] = content
        return None


class StagedRun:
    """A multi-stage episode played by one policy per stage, switched by the stage notices."""

    name = "staged"

    def __init__(self, runs: list[Any]) -> None:
        self.runs = runs

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        return self.runs[min(current_stage(messages), len(self.runs) - 1)].act(messages, tools)

    def relevant(self, reference: list[dict[str, Any]]) -> bool:
        """Whether a stage's run that can tell would differ from the reference (see the probes' ``relevant``)."""
        tests = [run.relevant for run in self.runs if hasattr(run, "relevant")]
        return not tests or any(test(reference) for test in tests)


def stage_oracle(spec: TaskSpec, k: int) -> OracleRun:
    """The reference run of stage ``k`` alone."""
    return OracleRun(stage_view(spec, k), call_prefix="call_" if k == 0 else f"call_s{k + 1}_")


class OracleTeacher:
    """The task-aware teacher policy: ``for_task`` starts a fresh run of the reference (of every stage)."""

    name = "oracle"

    def for_task(self, spec: TaskSpec) -> OracleRun | StagedRun:
        if spec.stages:
            return StagedRun([stage_oracle(spec, k) for k in range(stage_count(spec))])
        return OracleRun(spec)
