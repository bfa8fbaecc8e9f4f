"""What acts on the workspace during a step: tool calls (their faults and workflow rules) and events.

The general path of a turn's calls lives here; ``Environment._lean_step`` takes the usual single read or
write without it. Split from ``environment.py`` by concept: the lifecycle there, the acting here.
"""

from __future__ import annotations

import random
from typing import Any

from coworkenv.runtime.events import EventScheduler, Firing
from coworkenv.runtime.policy_monitor import RuleMonitor
from coworkenv.runtime.records import CallLog, set_tool_calls
from coworkenv.runtime.router import CallResult, ToolRouter
from coworkenv.runtime.stages import StageRun
from coworkenv.runtime.turn import ToolCall
from coworkenv.runtime.workspace import Workspace
from coworkenv.services.base import ToolError, ToolInfo
from coworkenv.spec.models import TRANSIENT_ERROR, TaskSpec
from coworkenv.trajectory import StepRecord, Violation

NOTICE = "[environment]"


class Acting:
    """Tool calls and events for ``Environment``, which sets every attribute below at construction or reset."""

    spec: TaskSpec
    workspace: Workspace
    router: ToolRouter
    monitor: RuleMonitor
    scheduler: EventScheduler
    stages: StageRun | None
    log: CallLog
    violations: list[Violation]
    tool_counts: dict[str, int]
    max_tool_calls: int
    fault_rate: float
    rng: random.Random
    confirmed: bool
    done: bool
    done_reason: str

    def end(self, reason: str) -> None:
        """End the episode now (limits reached, or the policy failed)."""
        self.done = True
        self.done_reason = reason

    def _run_calls(self, calls: list[ToolCall], record: StepRecord, new: list[dict[str, Any]]) -> bool:
        """Run a turn's calls, adding their messages (then any event notices) to ``new``; whether the state may
        have changed."""
        if len(calls) == 1 and self.log.count() < self.max_tool_calls:  # the usual turn: one call, in budget
            call = calls[0]
            msg, wrote, fired = self._run_call(call.id, call.name, call.arguments, record)
            set_tool_calls(record, 1)
            new.append(msg)
            new.extend(fired)
            return wrote or bool(fired) or bool(record.events)
        notices: list[dict[str, Any]] = []
        changed = False
        ran = 0
        for call in calls:
            if self.log.count() >= self.max_tool_calls:
                new.append(_tool_msg(call.id, call.name, "tool-call limit reached; the episode is over"))
                self.end("max_tool_calls")
                continue
            ran += 1
            msg, wrote, fired = self._run_call(call.id, call.name, call.arguments, record)
            new.append(msg)
            notices.extend(fired)
            changed |= wrote or bool(fired)
        if ran:
            set_tool_calls(record, ran)
        new.extend(notices)
        return changed or bool(record.events)

    def _run_call(
        self, call_id: str, name: str, raw: Any, record: StepRecord
    ) -> tuple[dict[str, Any], bool, list[dict[str, Any]]]:
        """Run one call; returns the tool message, whether it wrote, and event notices."""
        step = record.index
        info, args, error = self.router.parse_args(name, raw)
        fault = None
        if info is None or args is None:
            outcome = CallResult(False, error=error, args=args, info=info)
        else:
            count = self.tool_counts.get(name, 0) + 1
            self.tool_counts[name] = count
            if self.stages is not None or self.spec.faults or self.fault_rate:  # else no call can hit a fault
                fault = self._fault(name, count)
            if fault is not None:
                outcome = CallResult(False, error=fault, args=args, info=info)
            else:  # validate, check the workflow rules, run (a call its schema rejects never acted: breaks no rule)
                kwargs = self.router.validate(info, args)
                if isinstance(kwargs, CallResult):
                    outcome = kwargs
                else:
                    if info.name in self.monitor.by_tool:  # most tools have no rule
                        self._check_rules(info, args, record)
                    outcome = self.router.execute(info, kwargs, args)
        kind = info.kind if info else None
        ok = outcome.ok
        kept = None if args is None else dict(args)  # the record's own copy, as validating it would make
        self.log.unlogged.append(
            (step, call_id, name, kept, ok, kind, outcome.error, fault is not None, self.confirmed)
        )
        notices: list[dict[str, Any]] = []
        if ok and args is not None and name in self.scheduler.by_tool:
            for firing in self.scheduler.on_call(name, args, step):
                notices.extend(self._apply_event(firing, record))
        return _tool_msg(call_id, name, outcome.content()), ok and kind == "write", notices

    def _check_rules(self, info: ToolInfo, args: dict[str, Any], record: StepRecord) -> None:
        """Note the workflow rules a call about to run breaks."""
        broken = self.monitor.violations(info.name, args, self.confirmed, self.log.calls, self.workspace.state)
        for policy in broken:
            self.violations.append(
                Violation(step=record.index, policy=policy.id, tool=info.name, description=policy.description)
            )
            record.violations.append(policy.id)

    def _fault(self, tool: str, count: int) -> str | None:
        """The transient error this call hits, if any: scheduled by the spec or stage, or drawn at ``fault_rate``."""
        staged = self.stages.fault(tool) if self.stages is not None else None
        if staged is not None:
            return staged
        for fault in self.spec.faults:
            if fault.tool == tool and fault.on_call == count:
                return fault.message
        if self.fault_rate and self.rng.random() < self.fault_rate:
            return TRANSIENT_ERROR
        return None

    def _apply_event(self, firing: Firing, record: StepRecord | None) -> list[dict[str, Any]]:
        for mutation in firing.mutations:
            try:
                self.workspace.apply(mutation)
            except (ToolError, KeyError):  # the agent may have deleted the record the event targets
                continue
        if record is not None:
            record.events.append(firing.event.id)
        return [notice(f"Notification: {firing.notify}")] if firing.notify else []


def _tool_msg(call_id: str, name: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def notice(text: str) -> dict[str, Any]:
    return {"role": "user", "content": f"{NOTICE} {text}"}
