"""The typed parts of a store line, written field by field as ``json_text(model.model_dump(mode="json"))`` would.

A trajectory is mostly small typed records (steps, calls, check results), and json's encoder spends far
more on each small dict (listing, sorting and escaping its keys) than on its values. Their keys are known,
so each record is written with its keys already in sorted order, each value as json writes it. That holds
only for values of exactly the declared types, which is what pydantic and the runtime put there: anything
else (a subclass, an int in a float field, a NaN, an argument that is not plain JSON) raises
:class:`Unusual`, and the caller writes the full dump instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from coworkenv.runtime.json_encoding import reusable
from coworkenv.trajectory import (
    CheckResult,
    EpisodeRecord,
    Grade,
    StageMark,
    StepRecord,
    ToolCallRecord,
    Trajectory,
    UserReply,
    Violation,
)

_text = json.encoder.encode_basestring  # the C function json's encoder writes a str with (non-ASCII kept)
_encode = reusable(json.JSONEncoder(ensure_ascii=False, sort_keys=True, allow_nan=False))
_SCALARS = frozenset({str, int, float, bool, type(None)})


class Unusual(ValueError):
    """A value this module does not write exactly as the full dump would."""


def _exact(value: Any, cls: type) -> None:
    if type(value) is not cls:
        raise Unusual(f"not exactly {cls.__name__}: {type(value).__name__}")


def _s(value: Any) -> str:
    if type(value) is not str:
        raise Unusual("not exactly a str")
    return _text(value)


def _os(value: Any) -> str:
    return "null" if value is None else _s(value)


def _i(value: Any) -> str:
    if type(value) is not int:
        raise Unusual("not exactly an int")
    return int.__repr__(value)


def _oi(value: Any) -> str:
    return "null" if value is None else _i(value)


def _f(value: Any) -> str:
    if type(value) is not float or not math.isfinite(value):
        raise Unusual("not exactly a finite float")
    return float.__repr__(value)


def _of(value: Any) -> str:
    return "null" if value is None else _f(value)


def _b(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    raise Unusual("not a bool")


def _ob(value: Any) -> str:
    return "null" if value is None else _b(value)


def _strs(values: Any) -> str:
    _exact(values, list)
    return "[" + ", ".join(map(_s, values)) + "]"


def _plain(value: Any) -> bool:
    """Whether ``value`` is plain JSON of exact types (text keys): what json and pydantic write alike."""
    kind = type(value)
    if kind is dict:
        for k, v in value.items():
            if type(k) is not str:
                return False
            of = type(v)
            if not (of is str or of is int or of is bool or v is None or _plain(v)):  # most values: text
                return False
        return True
    if kind is list:
        return all(_plain(v) for v in value)
    return kind in _SCALARS and (kind is not float or math.isfinite(value))


def _items(items: Any, write: Callable[[Any], str], cls: type) -> str:
    """A list of records of exactly ``cls``, each written by ``write``."""
    _exact(items, list)
    parts = []
    for item in items:
        if type(item) is not cls:
            raise Unusual(f"not exactly {cls.__name__}: {type(item).__name__}")
        parts.append(write(item))
    return "[" + ", ".join(parts) + "]"


def _reply(r: UserReply) -> str:
    d = r.__dict__
    return (
        f'{{"approved": {_ob(d["approved"])}, "kind": {_s(d["kind"])}, "slots": {_strs(d["slots"])}, '
        f'"step": {_i(d["step"])}}}'
    )


def _step(s: StepRecord) -> str:
    d = s.__dict__
    index, calls, malformed, user, events, violations = (
        d["index"], d["tool_calls"], d["malformed"], d["user"], d["events"], d["violations"]
    )  # fmt: skip
    if (
        type(index) is int
        and type(calls) is int
        and type(malformed) is bool
        and user is None
        and type(events) is list
        and type(violations) is list
        and not events
        and not violations
    ):  # most steps: one call, nothing else happened
        return (
            f'{{"events": [], "index": {index}, "malformed": {"true" if malformed else "false"}, '
            f'"tool_calls": {calls}, "user": null, "violations": []}}'
        )
    if user is not None:
        _exact(user, UserReply)
    return (
        f'{{"events": {_strs(d["events"])}, "index": {_i(d["index"])}, "malformed": {_b(d["malformed"])}, '
        f'"tool_calls": {_i(d["tool_calls"])}, "user": {"null" if user is None else _reply(user)}, '
        f'"violations": {_strs(d["violations"])}}}'
    )


def _call(c: ToolCallRecord) -> str:
    d = c.__dict__
    args, call_id, tool, step, kind, error = d["args"], d["call_id"], d["tool"], d["step"], d["kind"], d["error"]
    ok, fault, confirmed = d["ok"], d["fault"], d["confirmed"]
    if args is not None and (type(args) is not dict or not _plain(args)):
        raise Unusual("arguments that are not plain JSON")
    if not (
        type(call_id) is str
        and type(tool) is str
        and type(step) is int
        and (kind is None or type(kind) is str)
        and (error is None or type(error) is str)
        and type(ok) is bool
        and type(fault) is bool
        and type(confirmed) is bool
    ):
        raise Unusual("a call record field not of its declared type")
    return (
        f'{{"args": {"null" if args is None else _encode(args)}, "call_id": {_text(call_id)}, '
        f'"confirmed": {"true" if confirmed else "false"}, "error": {"null" if error is None else _text(error)}, '
        f'"fault": {"true" if fault else "false"}, "kind": {"null" if kind is None else _text(kind)}, '
        f'"ok": {"true" if ok else "false"}, "step": {int.__repr__(step)}, "tool": {_text(tool)}}}'
    )


_CHECKS: dict[tuple[Any, ...], str] = {}
_CHECKS_LIMIT = 4096


def _check(c: CheckResult) -> str:
    """A check result's JSON, kept by its values once they are of exactly the declared types (equal values of
    those types write equal text; a zero weight is left out, as 0.0 and -0.0 are equal but write apart): the
    episodes of a spec repeat the same results."""
    d = c.__dict__
    key = (d["id"], d["kind"], d["weight"], d["passed"], d["required"], d["first_step"], d["detail"])
    cid, kind, weight, passed, required, first, detail = key
    if not (
        type(cid) is str
        and type(kind) is str
        and type(weight) is float
        and weight
        and type(passed) is bool
        and type(required) is bool
        and (first is None or type(first) is int)
        and type(detail) is str
    ):
        return _check_text(d)
    text = _CHECKS.get(key)
    if text is None:
        text = _check_text(d)  # raises Unusual before anything is kept (a weight that is not finite)
        if len(_CHECKS) >= _CHECKS_LIMIT:
            _CHECKS.clear()
        _CHECKS[key] = text
    return text


def _check_text(d: dict[str, Any]) -> str:
    return (
        f'{{"detail": {_s(d["detail"])}, "first_step": {_oi(d["first_step"])}, "id": {_s(d["id"])}, '
        f'"kind": {_s(d["kind"])}, "passed": {_b(d["passed"])}, "required": {_b(d["required"])}, '
        f'"weight": {_f(d["weight"])}}}'
    )


def _violation(v: Violation) -> str:
    d = v.__dict__
    return (
        f'{{"description": {_s(d["description"])}, "policy": {_s(d["policy"])}, "step": {_i(d["step"])}, '
        f'"tool": {_s(d["tool"])}}}'
    )


def _grade(g: Grade) -> str:
    d = g.__dict__
    stages = d["stages"]
    return (
        f'{{"checks": {_items(d["checks"], _check, CheckResult)}, "claw_eval_score": {_of(d["claw_eval_score"])}, '
        f'"completion": {_f(d["completion"])}, "passed": {_b(d["passed"])}, "robustness": {_f(d["robustness"])}, '
        f'"safety": {_f(d["safety"])}, "score": {_f(d["score"])}, '
        f'"stages": {"null" if stages is None else _items(stages, _grade, Grade)}, '
        f'"violations": {_items(d["violations"], _violation, Violation)}}}'
    )


def _mark(m: StageMark) -> str:
    d = m.__dict__
    return (
        f'{{"clock": {_os(d["clock"])}, "context": {_s(d["context"])}, "first_message": {_i(d["first_message"])}, '
        f'"first_step": {_i(d["first_step"])}, "id": {_s(d["id"])}, "index": {_i(d["index"])}}}'
    )


def _usage(usage: Any) -> str:
    if type(usage) is not dict or not all(type(k) is str and type(v) is int for k, v in usage.items()):
        raise Unusual("usage that is not text keys and int counts")
    return _encode(usage) if usage else "{}"


def trajectory_texts(t: Trajectory) -> tuple[str, str, str]:
    """The trajectory's JSON but for its messages and tool menu: the text before the messages, between them and
    the menu, and after the menu. The messages are written by json's encoder, and the menu is the same for every
    episode of an environment, so a line joins their bytes between these (no long text copied into another)."""
    _exact(t, Trajectory)
    d = t.__dict__
    grade, stages = d["grade"], d["stages"]
    if grade is not None:
        _exact(grade, Grade)
    head = (
        f'{{"blueprint": {_os(d["blueprint"])}, "calls": {_items(d["calls"], _call, ToolCallRecord)}, '
        f'"capabilities": {_strs(d["capabilities"])}, "done_reason": {_s(d["done_reason"])}, '
        f'"error": {_os(d["error"])}, "evaluation_only": {_b(d["evaluation_only"])}, '
        f'"final_state_hash": {_s(d["final_state_hash"])}, "grade": {"null" if grade is None else _grade(grade)}, '
        '"messages": '
    )
    middle = (
        f', "multi_turn": {_b(d["multi_turn"])}, "policy": {_s(d["policy"])}, '
        f'"sample": {_i(d["sample"])}, "seconds": {_f(d["seconds"])}, "seed": {_i(d["seed"])}, '
        f'"spec_id": {_s(d["spec_id"])}, "stages": {"null" if stages is None else _items(stages, _mark, StageMark)}, '
        f'"steps": {_items(d["steps"], _step, StepRecord)}, "tools": '
    )
    return head, middle, f', "usage": {_usage(d["usage"])}}}'


def record_texts(r: EpisodeRecord) -> tuple[str, str, str]:
    """The record's JSON (its trajectory present) around the trajectory's messages and tool menu (see
    :func:`trajectory_texts`)."""
    _exact(r, EpisodeRecord)
    d = r.__dict__
    head, middle, tail = trajectory_texts(d["trajectory"])
    return (
        f'{{"error": {_os(d["error"])}, "key": {_s(d["key"])}, "passed": {_b(d["passed"])}, '
        f'"policy": {_s(d["policy"])}, "sample": {_i(d["sample"])}, "score": {_of(d["score"])}, '
        f'"seconds": {_of(d["seconds"])}, "seed": {_i(d["seed"])}, "spec_id": {_s(d["spec_id"])}, '
        f'"status": {_s(d["status"])}, "trajectory": {head}',
        middle,
        tail + "}",
    )
