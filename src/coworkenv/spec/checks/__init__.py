"""Check kinds: the declarative, weighted predicates the grader evaluates (state, calls, user, answer).

Each kind is one class (see :mod:`coworkenv.spec.checks.base`). ``Check`` is the spec's union of
them, discriminated by ``kind``; a new kind is a module defining its class and a line in
``CHECK_CLASSES`` below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Union

from pydantic import Field

from coworkenv.spec.checks.answer_counts import AnswerCounts
from coworkenv.spec.checks.answers import AnswerCheck, AnswerContains, AnswerNumber, Prompt
from coworkenv.spec.checks.asked import AskedUser
from coworkenv.spec.checks.base import (
    KINDS,
    CallBound,
    CheckModel,
    EpisodeCheck,
    EpisodeLog,
    Hits,
    Names,
    Records,
    StateCheck,
    holds,
    record_matches,
)
from coworkenv.spec.checks.calls import ConfirmedBefore, MaxCalls, Order, ToolCalled, ToolNotCalled, successful_calls
from coworkenv.spec.checks.fields import FieldEquals, FieldMatches, FieldNumber
from coworkenv.spec.checks.records import Count, RecordAbsent, RecordExists
from coworkenv.spec.checks.unchanged import Unchanged

CHECK_CLASSES: tuple[type[CheckModel], ...] = (
    RecordExists,
    RecordAbsent,
    FieldEquals,
    Count,
    FieldMatches,
    FieldNumber,
    Unchanged,
    ToolCalled,
    ToolNotCalled,
    MaxCalls,
    Order,
    AskedUser,
    ConfirmedBefore,
    AnswerContains,
    AnswerNumber,
    AnswerCounts,
)
"""Every kind a spec may hold, in the order the JSON Schema lists them."""

if TYPE_CHECKING:
    Check = CheckModel
else:
    Check = Annotated[Union[CHECK_CLASSES], Field(discriminator="kind")]  # noqa: UP007 (built from a tuple)

GUARD_KINDS = tuple(cls.model_fields["kind"].default for cls in CHECK_CLASSES if cls.guard)
"""Kinds that say what must *not* happen: they hold until the agent errs, so may hold at the start."""

__all__ = [
    "CHECK_CLASSES",
    "GUARD_KINDS",
    "KINDS",
    "AnswerCheck",
    "AnswerContains",
    "AnswerCounts",
    "AnswerNumber",
    "AskedUser",
    "CallBound",
    "Check",
    "CheckModel",
    "ConfirmedBefore",
    "Count",
    "EpisodeCheck",
    "EpisodeLog",
    "FieldEquals",
    "FieldMatches",
    "FieldNumber",
    "Hits",
    "MaxCalls",
    "Names",
    "Order",
    "Prompt",
    "RecordAbsent",
    "RecordExists",
    "Records",
    "StateCheck",
    "ToolCalled",
    "ToolNotCalled",
    "Unchanged",
    "holds",
    "record_matches",
    "successful_calls",
]
