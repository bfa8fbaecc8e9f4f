"""The step's own records, made without validating what the runtime itself typed.

Every step makes a :class:`StepRecord`, every call a :class:`ToolCallRecord`; validating
values the environment made (an int index, a str tool name, the decoded argument dict) was
a tenth of a read step. These builders fill the instance as validation would — every field
in ``__dict__``, fresh default lists, and the same set of fields marked as given — so the
records compare, copy and serialise exactly like validated ones. (pydantic's
``model_construct`` does the same, but measured slower than validating.)

Even built so, the two records were a third of a read step, and most are read only when the
episode ends, if at all. :class:`CallLog` keeps the values of each call in a tuple and builds
its record when ``calls`` is read (the environment does the same for a lean step's own
record); the values are those of the call's own step, whatever happened since.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from coworkenv.spec.checks import EpisodeLog
from coworkenv.trajectory import StepRecord, ToolCallRecord

_new = object.__new__
# BaseModel's slots, set through their descriptors: ``object.__setattr__`` looks the name up on every call
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_CALL_FIELDS = frozenset(ToolCallRecord.model_fields)


Unlogged = tuple[int, str, str, dict[str, Any] | None, bool, str | None, str | None, bool, bool]
"""A call not yet a record: step, call id, tool, arguments (the record's own), ok, kind, error, fault, confirmed."""


def step_record(index: int, malformed: bool, tool_calls: int = 0) -> StepRecord:
    """``StepRecord(index=index, malformed=malformed)``, and ``tool_calls`` as :func:`set_tool_calls` sets it when
    given (a step with one call knows its count before running it)."""
    obj = _new(StepRecord)  # coworkenv.trajectory.trusted(), inlined: a step makes this record every time
    values = {"index": index, "tool_calls": tool_calls, "events": [], "violations": [], "user": None}
    values["malformed"] = malformed
    _set_dict(obj, values)
    _set_fields_set(obj, {"index", "malformed", "tool_calls"} if tool_calls else {"index", "malformed"})
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


def call_records(values: Iterable[Unlogged]) -> list[ToolCallRecord]:
    """A ``ToolCallRecord`` with every field given per tuple of values, in order; each keeps the arguments dict of
    its tuple (the environment's own copy). Built in one loop: the records of a whole episode are often made at
    once, when its trajectory is."""
    out = []
    for step, call_id, tool, args, ok, kind, error, fault, confirmed in values:
        obj = _new(ToolCallRecord)  # coworkenv.trajectory.trusted(), inlined
        _set_dict(
            obj,
            {
                "step": step,
                "call_id": call_id,
                "tool": tool,
                "args": args,
                "ok": ok,
                "kind": kind,
                "error": error,
                "fault": fault,
                "confirmed": confirmed,
            },
        )
        _set_fields_set(obj, set(_CALL_FIELDS))
        _set_extra(obj, None)
        _set_private(obj, None)
        out.append(obj)
    return out


def set_tool_calls(record: StepRecord, count: int) -> None:
    """``record.tool_calls = count`` as pydantic's ``__setattr__`` does it for a field without assignment
    validation (the value, and the field marked set), without the hook's lookups."""
    record.__dict__["tool_calls"] = count
    record.__pydantic_fields_set__.add("tool_calls")


class CallLog(EpisodeLog):
    """The episode log, whose calls wait in ``unlogged`` as tuples of their values until ``calls`` is read.

    Reading ``calls`` turns them into records first, in order, so every reader (grading, the user, the rules, the
    trajectory, a test holding the log) sees every call; ``logged`` holds the records made. The environment adds
    calls to ``unlogged`` only (a record appended to ``calls`` while tuples wait would come before them)."""

    logged: list[ToolCallRecord]
    unlogged: list[Unlogged]

    @property  # a field of EpisodeLog, kept here as two lists
    def calls(self) -> list[ToolCallRecord]:
        unlogged = self.unlogged
        if unlogged:
            self.logged.extend(call_records(unlogged))
            unlogged.clear()
        return self.logged

    @calls.setter
    def calls(self, value: list[ToolCallRecord]) -> None:
        self.logged = value
        self.unlogged = []

    def count(self) -> int:
        """How many calls the log holds (records and tuples), without making records."""
        return len(self.logged) + len(self.unlogged)
