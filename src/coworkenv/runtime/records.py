"""The step's own records, made without validating what the runtime itself typed.

Every step makes a :class:`StepRecord`, every call a :class:`ToolCallRecord`; validating
values the environment made (an int index, a str tool name, the decoded argument dict) was
a tenth of a read step. These builders fill the instance as validation would — every field
in ``__dict__``, fresh default lists, and the same set of fields marked as given — so the
records compare, copy and serialise exactly like validated ones. (pydantic's
``model_construct`` does the same, but measured slower than validating.)
"""

from __future__ import annotations

from typing import Any

from coworkenv.trajectory import StepRecord, ToolCallRecord, trusted

__all__ = ["call_record", "set_tool_calls", "step_record", "trusted"]

_new = object.__new__
_set = object.__setattr__
_CALL_FIELDS = frozenset(ToolCallRecord.model_fields)


def step_record(index: int, malformed: bool) -> StepRecord:
    """``StepRecord(index=index, malformed=malformed)``."""
    obj = _new(StepRecord)  # trusted(), inlined: a step makes this record every time
    _set(
        obj,
        "__dict__",
        {"index": index, "tool_calls": 0, "events": [], "violations": [], "user": None, "malformed": malformed},
    )
    _set(obj, "__pydantic_fields_set__", {"index", "malformed"})
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def call_record(
    step: int,
    call_id: str,
    tool: str,
    args: dict[str, Any] | None,
    ok: bool,
    kind: str | None,
    error: str | None,
    fault: bool,
    confirmed: bool,
) -> ToolCallRecord:
    """``ToolCallRecord`` with every field given; ``args`` is copied, as validation copies it."""
    obj = _new(ToolCallRecord)  # trusted(), inlined: every call makes this record
    values = {
        "step": step,
        "call_id": call_id,
        "tool": tool,
        "args": None if args is None else dict(args),
        "ok": ok,
        "kind": kind,
        "error": error,
        "fault": fault,
        "confirmed": confirmed,
    }
    _set(obj, "__dict__", values)
    _set(obj, "__pydantic_fields_set__", set(_CALL_FIELDS))
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def set_tool_calls(record: StepRecord, count: int) -> None:
    """``record.tool_calls = count`` as pydantic's ``__setattr__`` does it for a field without assignment
    validation (the value, and the field marked set), without the hook's lookups."""
    record.__dict__["tool_calls"] = count
    record.__pydantic_fields_set__.add("tool_calls")
