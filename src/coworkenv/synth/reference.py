"""The reference solution under construction: steps added in order, found again by role.

A blueprint writes its workflow as ``ref.call(tool, args, save_as=...)`` … ``ref.answer(...)``
and names the steps others must find (``role="main"`` for the key write, ``role="file"``
for a step a variant inserts before), so modifiers and options never edit by position.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

Step = dict[str, Any]
MAIN = "main"


class Reference:
    """Ordered reference steps (spec data) with a role index."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.roles: dict[str, Step] = {}

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def add(self, step: Step, role: str | None = None) -> Step:
        self.steps.append(step)
        if role:
            self.roles[role] = step
        return step

    def call(
        self,
        tool: str,
        args: dict[str, Any] | None = None,
        *,
        save_as: str | None = None,
        say: str | None = None,
        role: str | None = None,
    ) -> Step:
        """Call ``tool``; ``role="main"`` marks the key write (faults and confirmations target it)."""
        step: Step = {"call": tool}
        if args is not None:
            step["args"] = args
        if save_as:
            step["save_as"] = save_as
        if say:
            step["say"] = say
        return self.add(step, role)

    def again(self, role: str, say: str) -> Step:
        """Repeat the step called ``role`` (after a mid-episode change), saying why."""
        return self.call(**self._call_parts(self.role(role)), say=say)

    def answer(self, text: str) -> Step:
        return self.add({"answer": text})

    def role(self, name: str) -> Step:
        try:
            return self.roles[name]
        except KeyError:
            raise KeyError(f"no reference step has the role {name!r}; roles: {', '.join(self.roles)}") from None

    def alias(self, role: str, also: str) -> None:
        """Give the step called ``role`` a second role (``also``), e.g. make it the main write."""
        self.roles[also] = self.role(role)

    def main(self) -> Step | None:
        """The key write: the step with role ``main``, else the last call."""
        calls = list(self.calls())
        return self.roles.get(MAIN, calls[-1] if calls else None)

    def insert_before(self, role: str, step: Step, new_role: str | None = None) -> Step:
        """Put ``step`` right before the step called ``role``."""
        at = next(i for i, s in enumerate(self.steps) if s is self.role(role))
        self.steps.insert(at, step)
        if new_role:
            self.roles[new_role] = step
        return step

    def insert_each(self, where: Callable[[list[Step], Step], Step | None]) -> None:
        """Rebuild the steps: ``where(done, step)`` may return a step to put before ``step``."""
        rebuilt: list[Step] = []
        for step in self.steps:
            extra = where(rebuilt, step)
            if extra is not None:
                rebuilt.append(extra)
            rebuilt.append(step)
        self.steps = rebuilt

    def calls(self) -> Iterable[Step]:
        """The tool calls, in order."""
        return (s for s in self.steps if "call" in s)

    @staticmethod
    def _call_parts(step: Step) -> dict[str, Any]:
        return {"tool": step["call"], "args": step.get("args"), "save_as": step.get("save_as")}


def uses(step: Step, slot: str) -> bool:
    """Whether a reference step refers to ``facts.<slot>`` in any of its values."""
    pattern = re.compile(r"\bfacts\." + re.escape(slot) + r"\b")
    return any(pattern.search(text) for text in _strings(step))


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)
