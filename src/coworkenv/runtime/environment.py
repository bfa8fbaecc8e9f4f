"""The Environment: reset / step / grade over one TaskSpec.

An episode alternates agent turns and environment replies. A turn with tool calls gets
one tool message per call; a turn without tool calls is addressed to the user, and the
scripted user answers (a fact, a confirmation, a follow-up request) or ends the episode.
Events fire on schedule, rules are checked on every call, transient errors are
injected where the spec says, and every episode ends (turn and tool-call limits).
"""

from __future__ import annotations

import random

from coworkenv.grading.answers import prompt_of
from coworkenv.grading.score import grade as grade_episode
from coworkenv.grading.stages import StageState, combine_stages, grade_stage, unreached
from coworkenv.grading.tracking import CheckTracker
from coworkenv.runtime.asynchronous import AsyncMethods
from coworkenv.runtime.calls import ToolCalls, notice
from coworkenv.runtime.events import EventScheduler
from coworkenv.runtime.observation import Observation
from coworkenv.runtime.policy_monitor import RuleMonitor
from coworkenv.runtime.prompt import system_prompt
from coworkenv.runtime.router import spec_router
from coworkenv.runtime.stages import StageRun
from coworkenv.runtime.turn import parse_turn
from coworkenv.runtime.user import ScriptedUser
from coworkenv.runtime.workspace import Workspace
from coworkenv.spec.checks import EpisodeLog
from coworkenv.spec.models import TRANSIENT_ERROR, TaskSpec
from coworkenv.trajectory import Grade, StepRecord, Trajectory, UserReply, Violation
from coworkenv.values import clock


class Environment(AsyncMethods[Observation]):
    """One executable environment. ``seed`` drives optional random transient errors.

    ``stop_at_failed_stage``: a multi-stage episode ends (``stage_failed``) when a stage ends failed, since its
    score is then capped below the pass mark whatever the later stages do; they score 0 as never reached. The
    verifier's probe runs end so; a caller may set the attribute between episodes (a fork keeps it)."""

    def __init__(
        self,
        spec: TaskSpec,
        seed: int = 0,
        *,
        fault_rate: float = 0.0,
        max_turns: int | None = None,
        max_tool_calls: int | None = None,
        stop_at_failed_stage: bool = False,
    ) -> None:
        self.spec = spec
        self.seed = seed
        self.fault_rate = fault_rate
        self.stop_at_failed_stage = stop_at_failed_stage
        self.max_turns = max_turns or spec.max_turns
        self.workspace = Workspace(spec.services, spec.declared_services)
        self.router = spec_router(spec, self.workspace)
        self.ids = self.router.ids  # the interface's id style over this workspace's ids, if it has one
        self.monitor = RuleMonitor(spec.rules)
        self.scheduler = EventScheduler(
            spec.events, [s.events or [] for s in spec.stages or []], self.workspace.records
        )
        self.calls = ToolCalls(
            self.router, self.monitor, self.scheduler, self.workspace, max_tool_calls or spec.max_tool_calls
        )
        self.tracker = CheckTracker(spec.checks, self.workspace)  # step-0 results computed here, once
        self._system = system_prompt(spec)
        self._prompt = prompt_of(spec)  # what a reply restating the prompt could copy (earns no answer weight)
        self.stages = StageRun(spec) if spec.stages else None
        self._today = clock(spec.context)  # the user's today: read from the spec once, not at every reset
        self._multi_turn = spec.is_multi_turn
        self.reset()

    # --- episode lifecycle ----------------------------------------------------------------

    def reset(self) -> Observation:
        self.workspace.reset()
        self.tracker.reset()
        self.user = ScriptedUser(self.spec.user, self._today)
        self._rng: random.Random | None = None  # seeded when first drawn from: only random faults draw
        self._rng_seed = self.seed
        self.messages: list[dict[str, object]] = [
            {"role": "system", "content": self._system},
            {"role": "user", "content": self.user.opening()},
        ]
        self._steps: list[StepRecord] = []
        self.log = EpisodeLog(prompt=self._prompt)
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
        self._show(self.messages)
        self.tracker.record(0)
        return self._observation(list(self.messages))

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

    def step(self, turn: object) -> Observation:
        """Apply one agent turn; never raises on malformed input."""
        if self.done:
            return self._observation([], len(self._steps))
        index = len(self._steps) + 1
        stage = self.stages.index if self.stages is not None else 0
        parsed, problems = parse_turn(turn, index)
        record = StepRecord(index=index, malformed=bool(problems))
        for key, value in parsed.usage.items():
            self.usage[key] = self.usage.get(key, 0) + value
        self._steps.append(record)
        self.log.last_step = index
        self.messages.append(parsed.message())
        new: list[dict[str, object]] = []
        changed = False
        if problems:
            new.append(notice(f"Your last turn was malformed: {'; '.join(problems)}."))
        if parsed.tool_calls:
            changed, limited = self.calls.run(self, parsed.tool_calls, record, new)
            if limited:
                self.end("max_tool_calls")
        elif parsed.content and parsed.content.strip():
            text = parsed.content if self.ids is None else self.ids.into(parsed.content)
            self.log.answers.append((index, text))
            new.extend(self._user_reply(text, record))
        elif not problems:
            new.append(notice("Your last turn was empty: reply to the user or call a tool."))
        if self.scheduler.due(index):
            fired_before = len(record.events)
            new.extend(self._fire_events(after_step=index))
            changed |= len(record.events) > fired_before
        if changed:
            self.tracker.record(index)
        if not self.done and index >= self.max_turns:
            self.end("max_turns")
        self._show(new)
        self.messages.extend(new)
        return self._observation(new, index, self._stage_info(stage))

    def _show(self, messages: list[dict[str, object]]) -> None:
        """Put the ids in ``messages`` (new ones, made by the environment) in the form the interface shows."""
        if self.ids is not None:
            for message in messages:
                content = message.get("content")
                if isinstance(content, str):
                    message["content"] = self.ids.out(content)

    def _observation(
        self, new: list[dict[str, object]], step: int = 0, info: dict[str, object] | None = None
    ) -> Observation:
        """The observation of ``new`` messages."""
        return Observation(
            new, self.router.schemas(), self.done, None, step, {"done_reason": self.done_reason, **(info or {})}
        )

    @property
    def steps(self) -> list[StepRecord]:
        """The step records so far, in a new list."""
        return list(self._steps)

    @property
    def step_count(self) -> int:
        """How many steps the episode has taken."""
        return len(self._steps)

    @property
    def max_tool_calls(self) -> int:
        """The episode's tool-call budget."""
        return self.calls.max_tool_calls

    def end(self, reason: str) -> None:
        """End the episode now (limits reached, or the policy failed)."""
        self.done = True
        self.done_reason = reason

    def fault(self, tool: str, count: int) -> str | None:
        """The transient error the ``count``-th call of ``tool`` hits, if any: scheduled by the spec or stage, or
        drawn at ``fault_rate``."""
        staged = self.stages.fault(tool) if self.stages is not None else None
        if staged is not None:
            return staged
        for fault in self.spec.faults:
            if fault.tool == tool and fault.on_call == count:
                return fault.message
        if self.fault_rate and self.rng.random() < self.fault_rate:
            return TRANSIENT_ERROR
        return None

    def grade(self) -> Grade:
        """The grade so far; cached only once the episode is over (a mid-episode grade goes stale)."""
        if self._grade is not None and self.done:
            return self._grade
        st = self.stages
        if st is None:
            grade = self._stage_grade()
        else:  # a stage that ended failed and stopped the episode is graded already
            graded = st.grades if len(st.grades) > st.index else [*st.grades, self._stage_grade()]
            grade = combine_stages([*graded, *(unreached(v) for v in st.views[len(graded) :])])
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

    def transcript(self) -> list[dict[str, object]]:
        """Every message of the episode, including those a ``notes`` stage no longer shows the agent."""
        return [*self.stages.earlier, *self.messages] if self.stages is not None else list(self.messages)

    def trajectory(self, policy: str = "", sample: int = 0) -> Trajectory:
        """The episode as a Trajectory, built from this class's own typed values without validating them again."""
        return Trajectory.model_construct(
            spec_id=self.spec.id,
            seed=self.seed,
            policy=policy,
            sample=sample,
            messages=self.transcript(),
            tools=list(self.router.schemas()),
            steps=self.steps,
            calls=list(self.log.calls),
            grade=self.grade(),
            done_reason=self.done_reason or "unfinished",
            final_state_hash=self.workspace.state_hash(),
            capabilities=list(self.spec.capabilities),
            blueprint=self.spec.provenance.blueprint,
            evaluation_only=bool(self.spec.provenance.evaluation_only),
            multi_turn=self._multi_turn,
            usage=dict(self.usage),
            seconds=0.0,
            error=None,
            stages=list(self.stages.marks) if self.stages is not None else None,
        )

    # --- internals ------------------------------------------------------------------------

    def _user_reply(self, text: str, record: StepRecord) -> list[dict[str, object]]:
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

    def _stage_info(self, before: int) -> dict[str, object]:
        """When this step began a stage: its index, and whether the agent's view started over (a notes stage,
        whose new view is the system prompt and this step's messages)."""
        st = self.stages
        if st is None or st.index == before:
            return {}
        return {"stage": st.index, "view_reset": st.marks[-1].context == "notes"}

    def _next_stage(self, step: int) -> list[dict[str, object]]:
        """Grade the stage that ended at ``step`` and open the next (or end a run that stops at a failed stage);
        the new messages go out with the step."""
        st = self.stages
        assert st is not None
        grade = self._stage_grade()
        st.grades.append(grade)
        if self.stop_at_failed_stage and not grade.passed:
            self.end("stage_failed")
            return []
        self.messages = st.begin_next(self.workspace, step, self.messages)
        self.scheduler.begin_stage(st.index, step)
        self.user = ScriptedUser(st.views[st.index].user, st.times[st.index].date())  # the stage's day is today
        self.confirmed = False
        new = [self.messages.pop()]  # step() appends what it returns
        self.tracker.record(step)
        return new

    def _fire_events(self, after_step: int) -> list[dict[str, object]]:
        record = self._steps[-1] if self._steps else None
        return [n for firing in self.scheduler.at_step(after_step) for n in self.calls.fire(firing, record)]
