"""A turn's tool calls, each on one path: parse, fault, validate, rules, run, record; then the events it sets off.

:class:`ToolCalls` holds what a call acts through (the router, the workflow rules, the event scheduler, the
workspace) and nothing of an episode: the episode's log, counts, violations and faults come with each turn as an
:class:`EpisodeState`, which the ``Environment`` is.
"""

from __future__ import annotations

from typing import Protocol

from coworkenv.runtime.events import EventScheduler, Firing
from coworkenv.runtime.policy_monitor import RuleMonitor
from coworkenv.runtime.router import CallResult, ToolRouter
from coworkenv.runtime.turn import ToolCall
from coworkenv.runtime.workspace import Workspace
from coworkenv.services.base import ToolError, ToolInfo
from coworkenv.spec.checks import EpisodeLog
from coworkenv.trajectory import StepRecord, ToolCallRecord, Violation

NOTICE = "[environment]"


class EpisodeState(Protocol):
    """What a tool call reads and changes of its episode."""

    log: EpisodeLog
    violations: list[Violation]
    tool_counts: dict[str, int]
    confirmed: bool

    def fault(self, tool: str, count: int) -> str | None:
        """The transient error the ``count``-th call of ``tool`` hits, if any."""
        ...


class ToolCalls:
    """Runs tool calls and fires events in one environment's workspace."""

    def __init__(
        self,
        router: ToolRouter,
        monitor: RuleMonitor,
        scheduler: EventScheduler,
        workspace: Workspace,
        max_tool_calls: int,
    ) -> None:
        self.router = router
        self.monitor = monitor
        self.scheduler = scheduler
        self.workspace = workspace
        self.max_tool_calls = max_tool_calls

    def run(
        self, episode: EpisodeState, calls: list[ToolCall], record: StepRecord, new: list[dict[str, object]]
    ) -> tuple[bool, bool]:
        """Run a turn's calls, adding their messages (then any event notices) to ``new``. Returns whether the state
        may have changed, and whether the tool-call limit was reached (the episode is then over)."""
        notices: list[dict[str, object]] = []
        changed = limited = False
        for call in calls:
            if len(episode.log.calls) >= self.max_tool_calls:
                new.append(tool_message(call.id, call.name, "tool-call limit reached; the episode is over"))
                limited = True
                continue
            record.tool_calls += 1
            message, wrote, fired = self._run_call(episode, call, record)
            new.append(message)
            notices.extend(fired)
            changed |= wrote or bool(fired)
        new.extend(notices)
        return changed or bool(record.events), limited

    def _run_call(
        self, episode: EpisodeState, call: ToolCall, record: StepRecord
    ) -> tuple[dict[str, object], bool, list[dict[str, object]]]:
        """Run one call; returns the tool message, whether it wrote, and event notices."""
        info, args, error = self.router.parse_args(call.name, call.arguments)
        tool = call.name if info is None else info.name  # the record, faults and events name the tool's own name
        fault = None
        if info is None or args is None:
            outcome = CallResult(False, error=error, args=args, info=info)
        else:
            count = episode.tool_counts[tool] = episode.tool_counts.get(tool, 0) + 1
            fault = episode.fault(tool, count)
            if fault is not None:
                outcome = CallResult(False, error=fault, args=args, info=info)
            else:
                outcome = self._act(episode, info, args, record)
        kind = info.kind if info else None
        episode.log.calls.append(
            ToolCallRecord(
                step=record.index,
                call_id=call.id,
                tool=tool,
                args=args,
                ok=outcome.ok,
                kind=kind,
                error=outcome.error,
                fault=fault is not None,
                confirmed=episode.confirmed,
            )
        )
        notices: list[dict[str, object]] = []
        if outcome.ok and args is not None:
            for firing in self.scheduler.on_call(tool, args, record.index):
                notices.extend(self.fire(firing, record))
        message = tool_message(call.id, call.name, self.router.content(outcome))
        return message, outcome.ok and kind == "write", notices

    def _act(self, episode: EpisodeState, info: ToolInfo, args: dict[str, object], record: StepRecord) -> CallResult:
        """Validate, note the workflow rules broken, run (a call its schema rejects never acted: it breaks no rule)."""
        kwargs = self.router.validate(info, args)
        if isinstance(kwargs, CallResult):
            return kwargs
        broken = self.monitor.violations(info.name, args, episode.confirmed, episode.log.calls, self.workspace.state)
        for rule in broken:
            episode.violations.append(
                Violation(step=record.index, policy=rule.id, tool=info.name, description=rule.description)
            )
            record.violations.append(rule.id)
        return self.router.execute(info, kwargs, args)

    def fire(self, firing: Firing, record: StepRecord | None) -> list[dict[str, object]]:
        """Apply an event's changes (noted on ``record``, the step it fired in); its notice to the agent, if any."""
        for mutation in firing.mutations:
            try:
                self.workspace.apply(mutation)
            except (ToolError, KeyError):  # the agent may have deleted the record the event targets
                continue
        if record is not None:
            record.events.append(firing.event.id)
        return [notice(f"Notification: {firing.notify}")] if firing.notify else []


def tool_message(call_id: str, name: str, content: str) -> dict[str, object]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def notice(text: str) -> dict[str, object]:
    return {"role": "user", "content": f"{NOTICE} {text}"}
