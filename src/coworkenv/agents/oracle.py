"""The oracle teacher: executes a spec's reference solution and talks like a colleague.

It emits one reference step per turn — a tool call, a clarifying question, a
confirmation request or a report — binding each tool result under its ``save_as`` name
so later steps can reference it, and retrying a call that hit a transient error.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from coworkenv.expr import Compiled, ExprError, compile_template
from coworkenv.runtime.ids import IdMap, spec_ids
from coworkenv.runtime.turn import AssistantTurn, ToolCall
from coworkenv.spec.models import AnswerStep, AskStep, CallStep, ConfirmStep, ReferenceStep, TaskSpec
from coworkenv.spec.stages import current_stage, stage_count, stage_view

if TYPE_CHECKING:
    from coworkenv.runtime.policy import Policy

MAX_RETRIES = 3
TRANSIENT_MARKERS = ("503", "temporar", "retry", "timeout", "unavailable")
_ERROR_START = '{"error"'
_TEMPLATES: dict[int, tuple[object, Compiled]] = {}
_TEMPLATES_LIMIT = 4096


def is_transient(content: str) -> bool:
    """Whether a tool result is a transient error (an error object naming a retryable failure). The start is
    compared before the whole text is lower-cased: only ASCII letters lower-case to those of ``{"error"``."""
    if content[:8].lower() != _ERROR_START:
        return False
    low = content.lower()
    return any(m in low for m in TRANSIENT_MARKERS)


def compiled(template: object) -> Compiled:
    """``compile_template`` of a reference step's template, once per template object: the oracle plays the same
    steps episode after episode, and a spec is data nothing edits in place."""
    hit = _TEMPLATES.get(id(template))
    if hit is not None and hit[0] is template:
        return hit[1]
    fn = compile_template(template)
    if len(_TEMPLATES) >= _TEMPLATES_LIMIT:
        _TEMPLATES.clear()
    _TEMPLATES[id(template)] = (template, fn)  # the template is held: its id cannot be reused while it is here
    return fn


def turn(content: str | None, calls: list[ToolCall] | None = None) -> AssistantTurn:
    """The oracle's turn: ``content`` (and ``calls`` when given), validated like any model's."""
    return AssistantTurn(content=content) if calls is None else AssistantTurn(content=content, tool_calls=calls)


def tool_call(call_id: str, name: str, arguments: str | dict[str, object]) -> ToolCall:
    """One call of the oracle's turn (validation copies the arguments, so no two turns share them)."""
    return ToolCall(id=call_id, name=name, arguments=arguments)


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
        self.spec_ids = spec_ids(spec)  # the interface's id style over the spec's ids (None: ids as they are)
        self.learned: set[str] = set()  # the ids made during the episode that the oracle has read
        self._read = 0  # how many of the episode's messages it has read them in

    def act(self, messages: list[dict[str, object]], tools: list[dict[str, object]]) -> AssistantTurn:
        if self.spec_ids is not None:
            self._learn(messages)
        if self.pending is not None:
            retry = self._absorb_result(messages)
            if retry is not None:
                return retry
        if self.cursor >= len(self.spec.reference):
            return turn("Everything you asked for is done.")
        step = self.spec.reference[self.cursor]
        self.cursor += 1
        try:
            return self._emit(step)
        except ExprError as exc:
            return turn(self._shown(f"I could not complete the task: {exc}."))

    @property
    def ids(self) -> IdMap | None:
        """The ids the oracle has been shown, as a map (made per use: its state is the oracle's own fields)."""
        ids = self.spec_ids
        if ids is None:
            return None
        assert self.spec.interface is not None and self.spec.interface.ids is not None
        return IdMap(self.spec.interface.ids, ids, learned=self.learned)

    def _learn(self, messages: list[dict[str, object]]) -> None:
        """Read the ids in the messages not read yet (the created ones among them), from the start after a view
        that started over."""
        ids = self.ids
        assert ids is not None
        if len(messages) < self._read:
            self._read = 0
        for message in messages[self._read :]:
            content = message.get("content")
            if isinstance(content, str) and message.get("role") != "assistant":
                ids.read(content)
        self._read = len(messages)

    def _shown(self, text: str) -> str:
        """What the oracle says, its ids (worked out on canonical values) as the interface shows them."""
        ids = self.ids
        return text if ids is None else ids.out(text)

    def _emit(self, step: ReferenceStep) -> AssistantTurn:
        if isinstance(step, CallStep):
            self.calls += 1
            name, args = step.call, compiled(step.args)(self.ctx)
            if self.spec.interface is not None:  # the call as the agent makes it: the names the interface shows
                name, args = self.spec.interface.render_call(name, args)
            ids = self.ids
            if ids is not None:
                args = ids.map_value(args, ids.out)
            call = tool_call(f"{self.call_prefix}{self.calls}", name, args)
            self.pending = (step, call)
            self.retries = 0
            return turn(self._shown(compiled(step.say)(self.ctx)) if step.say else None, [call])
        if isinstance(step, AskStep):
            fact = next((f for f in self.spec.user.hidden_facts if f.slot == step.ask), None)
            if fact is not None:
                self.ctx["facts"][fact.slot] = fact.value
            return turn(self._shown(ask_text(self.spec, step.ask, step.question)))
        if isinstance(step, ConfirmStep):
            return turn(self._shown(confirm_text(compiled(step.confirm)(self.ctx))))
        assert isinstance(step, AnswerStep)
        return turn(self._shown(compiled(step.answer)(self.ctx)))

    def _absorb_result(self, messages: list[dict[str, object]]) -> AssistantTurn | None:
        """Bind the pending call's result; return a retry turn after a transient error."""
        assert self.pending is not None
        step, call = self.pending
        content = next(
            (
                str(m.get("content", ""))
                for m in reversed(messages)
                if m.get("role") == "tool" and m.get("tool_call_id") == call.id
            ),
            None,
        )
        if content is not None and is_transient(content) and self.retries < MAX_RETRIES:
            self.retries += 1
            self.calls += 1
            args = dict(call.arguments) if isinstance(call.arguments, dict) else call.arguments  # as validation copies
            retry = tool_call(f"{self.call_prefix}{self.calls}", call.name, args)
            self.pending = (step, retry)
            return turn("That failed with a temporary error; trying again.", [retry])
        self.pending = None
        if step.save_as and content is not None:
            ids = self.ids
            if ids is not None:  # the reference works on canonical ids, as on canonical keys
                content = ids.read(content)
            try:
                value = json.loads(content)
            except json.JSONDecodeError:
                value = content
            if self.spec.interface is not None:  # the reference reads results under their canonical keys
                value = self.spec.interface.canonical_result(step.call, value)
            self.ctx[step.save_as] = value
        return None


class StagedRun:
    """A multi-stage episode played by one policy per stage, switched by the stage notices."""

    name = "staged"

    def __init__(self, runs: list[Policy]) -> None:
        self.runs = runs

    def act(self, messages: list[dict[str, object]], tools: list[dict[str, object]]) -> AssistantTurn:
        return self.runs[min(current_stage(messages), len(self.runs) - 1)].act(messages, tools)

    def relevant(self, reference: list[dict[str, object]]) -> bool:
        """Whether a stage's run that can tell would differ from the reference (see the probes' ``relevant``)."""
        tests = [run.relevant for run in self.runs if hasattr(run, "relevant")]
        return not tests or any(test(reference) for test in tests)


def stage_prefix(k: int) -> str:
    """The call-id prefix of stage ``k``'s run (distinct per stage, so call ids stay unique in an episode)."""
    return "call_" if k == 0 else f"call_s{k + 1}_"


def stage_oracle(spec: TaskSpec, k: int, view: TaskSpec | None = None) -> OracleRun:
    """The reference run of stage ``k`` alone (``view``: the stage's view, when the caller has it)."""
    return OracleRun(view or stage_view(spec, k), call_prefix=stage_prefix(k))


class OracleTeacher:
    """The task-aware teacher policy: ``for_task`` starts a fresh run of the reference (of every stage).

    The stage views of the latest multi-stage spec are kept: a rollout plays many episodes of a spec in a row,
    and building the views cost as much as the oracle's turns."""

    name = "oracle"

    def __init__(self) -> None:
        self._views: tuple[TaskSpec, list[TaskSpec]] | None = None

    def for_task(self, spec: TaskSpec) -> OracleRun | StagedRun:
        if not spec.stages:
            return OracleRun(spec)
        return StagedRun([stage_oracle(spec, k, view) for k, view in enumerate(self.views(spec))])

    def views(self, spec: TaskSpec) -> list[TaskSpec]:
        """The stage views of a multi-stage spec (those of the latest such spec are kept)."""
        if self._views is None or self._views[0] is not spec:
            self._views = (spec, [stage_view(spec, k) for k in range(stage_count(spec))])
        return self._views[1]
