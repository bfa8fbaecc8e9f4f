"""The Environment: reset / step / grade over one TaskSpec.

An episode alternates agent turns and environment replies. A turn with tool calls gets
one tool message per call; a turn without tool calls is addressed to the user, and the
scripted user answers (a fact, a confirmation, a follow-up request) or ends the episode.
Events fire on schedule, policies are checked on every call, transient errors are
injected where the spec says, and every episode ends (turn and tool-call limits).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, cast

from coworkenv.grading.answers import prompt_of
from coworkenv.grading.score import grade as grade_episode
from coworkenv.grading.stages import StageState, combine_stages, grade_stage, unreached
from coworkenv.grading.tracking import CheckTracker
from coworkenv.runtime.acting import Acting, notice
from coworkenv.runtime.asynchronous import AsyncMethods
from coworkenv.runtime.events import EventScheduler
from coworkenv.runtime.policy_monitor import RuleMonitor
from coworkenv.runtime.prompt import system_prompt
from coworkenv.runtime.records import CallLog, step_record
from coworkenv.runtime.router import ToolRouter, exposed_tools
from coworkenv.runtime.stages import StageRun
from coworkenv.runtime.turn import AssistantTurn, ToolCall, call_message, parse_turn
from coworkenv.runtime.user import ScriptedUser
from coworkenv.runtime.workspace import Workspace
from coworkenv.spec.models import TaskSpec
from coworkenv.trajectory import Grade, StepRecord, Trajectory, UserReply, Violation, trusted
from coworkenv.values import clock

_TRAJECTORY_FIELDS = frozenset(Trajectory.model_fields)


@dataclass
class Observation:
    """What the agent sees after reset or a step: the new messages, and whether it is over."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    done: bool = False
    done_reason: str = ""
    step: int = 0
    info: dict[str, Any] = field(default_factory=dict)


class Environment(Acting, AsyncMethods[Observation]):
    """One executable environment. ``seed`` drives optional random transient errors."""

    def __init__(
        self,
        spec: TaskSpec,
        seed: int = 0,
        *,
        fault_rate: float = 0.0,
        max_turns: int | None = None,
        max_tool_calls: int | None = None,
    ) -> None:
        self.spec = spec
        self.seed = seed
        self.fault_rate = fault_rate
        self.max_turns = max_turns or spec.max_turns
        self.max_tool_calls = max_tool_calls or spec.max_tool_calls
        self.workspace = Workspace(spec.services, spec.declared_services)
        self.router = ToolRouter(self.workspace, exposed_tools(list(spec.services), spec.tools, spec.declared_services))
        self.monitor = RuleMonitor(spec.rules)
        self.scheduler = EventScheduler(
            spec.events, [s.events or [] for s in spec.stages or []], self.workspace.records
        )
        self.tracker = CheckTracker(spec.checks, self.workspace)  # step-0 results computed here, once
        self._system = system_prompt(spec)
        self._prompt = prompt_of(spec)  # what a reply restating the prompt could copy (earns no answer weight)
        self.stages = StageRun(spec) if spec.stages else None
        self._today = clock(spec.context)  # the user's today: read from the spec once, not at every reset
        self._multi_turn = spec.is_multi_turn
        self._fault_tools = frozenset(f.tool for f in spec.faults)  # a call of any other tool meets no spec fault
        self.reset()

    # --- episode lifecycle ----------------------------------------------------------------

    def reset(self) -> Observation:
        self.workspace.reset()
        self.tracker.reset()
        self.user = ScriptedUser(self.spec.user, self._today)
        self._rng: random.Random | None = None  # seeded when first drawn from: only random faults draw
        self._rng_seed = self.seed
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": self._system},
            {"role": "user", "content": self.user.opening()},
        ]
        self._steps: list[StepRecord | int] = []  # an int i: lean step i's record, made when read (see steps)
        self._built = 0  # how many of _steps are records
        self.log = CallLog(prompt=self._prompt)
        self.violations: list[Violation] = []
        self.tool_counts: dict[str, int] = {}
        self.scheduler.reset()
        self.fired = self.scheduler.fired
        self.confirmed = False
        self.usage: dict[str, int] = {}
        self.done = False
        self.done_reason = ""
        self._grade: Grade | None = None
        if self.stages is not None:
            self.stages.reset()
        self.messages.extend(self._fire_events(after_step=0))
        self._record_state_checks(0)
        return Observation(list(self.messages), self.router.schemas())

    @property
    def rng(self) -> random.Random:
        """The generator of random faults, as ``random.Random(seed)`` at the reset: made when first used, since
        seeding it costs more than a short step and an episode without random faults never draws."""
        if self._rng is None:
            self._rng = random.Random(self._rng_seed)
        return self._rng

    @rng.setter
    def rng(self, value: random.Random) -> None:
        self._rng = value

    def step(self, turn: Any) -> Observation:
        """Apply one agent turn; never raises on malformed input."""
        if self.done:
            return Observation([], self.router.schemas(), True, self.done_reason, len(self._steps))
        if type(turn) is AssistantTurn:
            lean = self._lean_step(turn)
            if lean is not None:
                return lean
        index = len(self._steps) + 1
        stages = self.stages
        stage = stages.index if stages is not None else 0
        parsed, problems = parse_turn(turn, index)
        record = self._open_step(index, bool(problems), parsed.usage)
        self.messages.append(parsed.message())
        new: list[dict[str, Any]] = []
        changed = False
        if problems:
            new.append(notice(f"Your last turn was malformed: {'; '.join(problems)}."))
        if parsed.tool_calls:
            changed = self._run_calls(parsed.tool_calls, record, new)
        elif parsed.content and parsed.content.strip():
            self.log.answers.append((index, parsed.content))
            new.extend(self._user_reply(parsed.content, record))
        elif not problems:
            new.append(notice("Your last turn was empty: reply to the user or call a tool."))
        info = self._stage_info(stage) if stages is not None else {}
        return self._close_step(index, record, new, changed, info)

    @property
    def steps(self) -> list[StepRecord]:
        """The step records so far, in a new list. A lean step (one call, nothing else to note) leaves only its
        index, and its record, ``StepRecord(index=i, tool_calls=1, malformed=False)``, is made when first read (most
        are read only when the episode ends, if at all); the same record objects on every read."""
        return list(self._built_steps())

    @property
    def step_count(self) -> int:
        """How many steps the episode has taken, without making the records of lean steps."""
        return len(self._steps)

    def _built_steps(self) -> list[StepRecord]:
        """``_steps`` with the records of lean steps made."""
        steps = self._steps
        if self._built < len(steps):
            for i in range(self._built, len(steps)):
                entry = steps[i]
                if type(entry) is int:
                    steps[i] = step_record(entry, False, 1)
            self._built = len(steps)
        return cast(list[StepRecord], steps)

    def _lean_step(self, turn: AssistantTurn) -> Observation | None:
        """``step`` for the usual turn, or None when the turn is not one: a single call with nothing to do but
        run it (no stage, no fault that could hit it: none of the spec's on its tool, no random ones; within the
        tool-call budget, no rule or event on its tool; an unknown tool too, whose error is all there is). What
        ``_run_calls`` and ``_run_call`` do for it, without their branches; the turn's fields are read from
        ``__dict__``, as in :meth:`ToolCall.message`. Its step and call records wait as values (:attr:`steps`,
        :class:`CallLog`)."""
        fields = turn.__dict__
        calls = fields["tool_calls"]
        if len(calls) != 1 or self.stages is not None or self.fault_rate:
            return None
        call = calls[0]
        given = call.__dict__
        name = given["name"]
        log = self.log
        scheduler = self.scheduler
        if (
            type(call) is not ToolCall
            or name in self._fault_tools
            or len(log.logged) + len(log.unlogged) >= self.max_tool_calls  # log.count(), inlined
            or name in self.monitor.by_tool
            or name in scheduler.by_tool
        ):
            return None
        index = len(self._steps) + 1
        self._begin_step(index, fields["usage"], index)
        call_id, raw = given["id"], given["arguments"]
        call_text = call_message(call_id, name, raw)
        self.messages.append({"role": "assistant", "content": fields["content"] or "", "tool_calls": [call_text]})
        info, args, ok, error, content = self.router.call(name, raw, self.tool_counts)
        kind = info.kind if info is not None else None
        if type(raw) is not str and args is not None:  # decoded from text, they are the router's own; else a copy
            args = dict(args)
        log.unlogged.append((index, call_id, name, args, ok, kind, error, False, self.confirmed))
        message = {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}
        wrote = ok and kind == "write"
        if wrote or index >= self.max_turns or scheduler.due(index):  # else _close_step has nothing to do
            return self._close_step(index, None, [message], wrote, {})
        self.messages.append(message)
        return Observation([message], self.router.schemas(), False, "", index, {})

    def _open_step(self, index: int, malformed: bool, usage: dict[str, int]) -> StepRecord:
        """Count the turn's tokens and start its step record."""
        record = step_record(index, malformed)
        self._begin_step(index, usage, record)
        return record

    def _begin_step(self, index: int, usage: dict[str, int], record: StepRecord | int) -> None:
        """Count the turn's tokens and add its step record (a lean step's index, see :attr:`steps`)."""
        if usage:
            for key, value in usage.items():
                self.usage[key] = self.usage.get(key, 0) + value
        self._steps.append(record)
        self.log.last_step = index

    def _close_step(
        self, index: int, record: StepRecord | None, new: list[dict[str, Any]], changed: bool, info: dict[str, Any]
    ) -> Observation:
        """Fire the events due after the step, note the checks that now hold, end at the turn limit; the step's
        observation. ``record``: the step's record, None for a lean step (made here if an event needs it)."""
        if self.scheduler.due(index):
            if record is None:
                record = self._built_steps()[-1]
            fired_before = len(record.events)
            new.extend(self._fire_events(after_step=index))
            changed |= len(record.events) > fired_before
        if changed:
            self._record_state_checks(index)
        if not self.done and index >= self.max_turns:
            self.end("max_turns")
        self.messages.extend(new)
        return Observation(new, self.router.schemas(), self.done, self.done_reason, index, info)

    def grade(self) -> Grade:
        """The grade so far; cached only once the episode is over (a mid-episode grade goes stale)."""
        if self._grade is not None and self.done:
            return self._grade
        grade = self._stage_grade()
        if self.stages is not None:
            st = self.stages
            grade = combine_stages([*st.grades, grade, *(unreached(v) for v in st.views[st.index + 1 :])])
        if self.done:
            self._grade = grade
        return grade

    def _stage_grade(self) -> Grade:
        """The grade of the current stage so far (of the whole episode without stages)."""
        st = self.stages
        if st is None or st.index == 0:
            view = self.spec if st is None else st.views[0]
            return grade_episode(
                view, self.workspace, self.log, self.violations, self.tracker.first_true, self.tracker.results()
            )
        assert st.start is not None
        state = StageState(self.workspace, st.start)
        return grade_stage(st.views[st.index], state, self.log, st.first_step, self.violations)

    def transcript(self) -> list[dict[str, Any]]:
        """Every message of the episode, including those a ``notes`` stage no longer shows the agent."""
        return [*self.stages.earlier, *self.messages] if self.stages is not None else list(self.messages)

    def trajectory(self, policy: str = "", sample: int = 0) -> Trajectory:
        """The episode as a Trajectory. Built without re-validation (every field is given, from values this
        class made and typed): validating the messages and tool schemas again cost more than the episode, and
        pydantic's ``model_construct`` more than the rest of this method."""
        values = {
            "spec_id": self.spec.id,
            "seed": self.seed,
            "policy": policy,
            "sample": sample,
            "messages": self.transcript(),
            "tools": list(self.router.schemas()),
            "steps": self.steps,
            "calls": list(self.log.calls),
            "grade": self.grade(),
            "done_reason": self.done_reason or "unfinished",
            "final_state_hash": self.workspace.state_hash(),
            "capabilities": list(self.spec.capabilities),
            "blueprint": self.spec.provenance.blueprint,
            "evaluation_only": bool(self.spec.provenance.evaluation_only),
            "multi_turn": self._multi_turn,
            "usage": dict(self.usage),
            "seconds": 0.0,
            "error": None,
            "stages": list(self.stages.marks) if self.stages is not None else None,
        }
        return trusted(Trajectory, values, set(_TRAJECTORY_FIELDS))

    # --- internals ------------------------------------------------------------------------

    def _user_reply(self, text: str, record: StepRecord) -> list[dict[str, Any]]:
        reply = self.user.respond(text, self.workspace.state, self.log.calls)
        record.user = UserReply(step=record.index, kind=reply.kind, slots=reply.slots, approved=reply.approved)
        self.log.replies.append(record.user)
        self.confirmed = bool(reply.approved)
        if reply.kind == "end":
            if self.stages is not None and not self.stages.last:
                return self._next_stage(record.index)
            self.end("user_done")
            return []
        return [{"role": "user", "content": reply.text or ""}]

    def _stage_info(self, before: int) -> dict[str, Any]:
        """When this step began a stage: its index, and whether the agent's view started over (a notes stage,
        whose new view is the system prompt and this step's messages)."""
        st = self.stages
        if st is None or st.index == before:
            return {}
        return {"stage": st.index, "view_reset": st.marks[-1].context == "notes"}

    def _next_stage(self, step: int) -> list[dict[str, Any]]:
        """Grade the stage that ended at ``step`` and open the next; the new messages go out with the step."""
        st = self.stages
        assert st is not None
        st.grades.append(self._stage_grade())
        self.messages = st.begin_next(self.workspace, step, self.messages)
        self.scheduler.begin_stage(st.index, step)
        self.user = ScriptedUser(st.views[st.index].user, st.times[st.index].date())  # the stage's day is today
        self.confirmed = False
        new = [self.messages.pop()]  # step() appends what it returns
        self._record_state_checks(step)
        return new

    def _fire_events(self, after_step: int) -> list[dict[str, Any]]:
        steps = self._built_steps()
        record = steps[-1] if steps else None
        return [n for firing in self.scheduler.at_step(after_step) for n in self._apply_event(firing, record)]

    def _record_state_checks(self, step: int) -> None:
        self.tracker.record(step)
