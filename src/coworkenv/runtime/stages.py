"""The stages of one multi-stage episode: where each began, their grades, and the move to the next.

When the user has nothing more to say in a stage (the report is in, the follow-ups done),
the stage is graded on the state at that moment, the clock advances, the stage's changes
are applied to the workspace (one naming its record by ``where`` is resolved then, so it can
reach a record an earlier stage created), and the next request arrives in a notice that says
the time and what changed. With ``context: notes`` the agent's view starts over: the system prompt
and the notice, which carries the note the agent left in the documents service.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coworkenv.grading.stages import StageState
from coworkenv.runtime.events import Miss, targets
from coworkenv.services.base import ToolError
from coworkenv.spec.checks import StateCheck
from coworkenv.spec.models import Stage, TaskSpec
from coworkenv.spec.stages import STAGE_MARK, clock_text, stage_clocks, stage_views
from coworkenv.trajectory import Grade, StageMark

if TYPE_CHECKING:
    from coworkenv.runtime.workspace import State, Workspace


class StageRun:
    """Stage bookkeeping of one episode; ``reset`` puts it back to the first stage."""

    def __init__(self, spec: TaskSpec) -> None:
        self.stages: list[Stage] = list(spec.stages or [])
        self.views = stage_views(spec)
        self.times = stage_clocks(spec)
        self.clocks = [clock_text(t) for t in self.times]
        self.reset()

    def reset(self) -> None:
        self.index = 0
        self.first_step = 1
        self.grades: list[Grade] = []
        self.start: State | None = None
        self.earlier: list[dict[str, object]] = []  # messages the agent no longer sees (before a notes stage)
        self.marks = [StageMark(index=0, id="first", first_step=1, first_message=0, clock=self.clocks[0])]
        self.openings: list[list[str]] = []  # per later stage: its non-guard state checks already true at its start
        self.calls: dict[str, int] = {}  # calls per tool in this stage, which its faults count
        self.missed: list[Miss] = []  # changes between stages by ``where`` that found no record or several

    def fault(self, tool: str) -> str | None:
        """Count a call of ``tool`` in the current stage; the transient error its own faults inject on it, if any."""
        count = self.calls[tool] = self.calls.get(tool, 0) + 1
        faults = self.stages[self.index - 1].faults or [] if self.index else []
        return next((f.message for f in faults if f.tool == tool and f.on_call == count), None)

    @property
    def last(self) -> bool:
        return self.index == len(self.stages)

    def begin_next(self, ws: Workspace, step: int, messages: list[dict[str, object]]) -> list[dict[str, object]]:
        """Move to the next stage after agent step ``step``; returns the agent's new view (``messages`` itself in
        conversation mode, else a fresh one) with the stage's notice and request appended."""
        self.index += 1
        self.calls = {}
        stage = self.stages[self.index - 1]
        for mutation in targets(f"stage:{stage.id}", stage.mutations, ws.records, self.missed):
            try:
                ws.apply(mutation)
            except (ToolError, KeyError):  # the agent may have deleted the record the change targets
                continue
        self.start = ws.snapshot()
        self.first_step = step + 1
        view = self.views[self.index]
        state = StageState(ws, self.start)
        self.openings.append(  # guards hold until the agent errs, so holding at the start says nothing of them
            [c.id for c in view.checks if isinstance(c, StateCheck) and not c.guard and c.judge(state)[0]]
        )
        text = f"{STAGE_MARK}{self.index + 1} of {len(self.views)}: it is now {self.clocks[self.index]}."
        if stage.notify:
            text += f" {stage.notify}"
        if stage.context == "notes":
            assert stage.notes is not None
            text += "\n" + _note(ws, stage.notes)
            self.earlier.extend(messages)
            messages = messages[:1]  # the system prompt
        self.marks.append(
            StageMark(
                index=self.index,
                id=stage.id,
                first_step=self.first_step,
                first_message=len(self.earlier) if stage.context == "notes" else len(self.earlier) + len(messages),
                context=stage.context,
                clock=self.clocks[self.index],
            )
        )
        messages.append({"role": "user", "content": f"{text}\n\n{view.user.opening}"})
        return messages


def _note(ws: Workspace, path: str) -> str:
    """The note the agent left at ``path``, as the new stage shows it."""
    docs = [d for d in ws.records("documents", "documents").values() if d.get("path") == path]
    if not docs:
        return f"You left no note at {path} in an earlier stage; earlier conversations are not available."
    content = docs[-1].get("content", "")
    return f"Your note from an earlier stage ({path}); earlier conversations are not available:\n{content}"
