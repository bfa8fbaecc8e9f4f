"""The checks of a draft, written by kind with typed conditions.

Each method adds one check (a validated check model) and returns it; ``add`` builds any
kind. ``where``/``allow`` take an :class:`~coworkenv.synth.expr_builder.Expr`, never text, so values are quoted by one
function. ``group`` names the probe group a check belongs to (``follow_up``, ``event``,
``asked``): ``balance`` weighs each group up so that a probe missing it fails.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypedDict, Unpack

from coworkenv.spec.checks import KINDS, CheckModel
from coworkenv.synth.expr_builder import Expr


class CheckOptions(TypedDict, total=False):
    """What a check may say besides its condition: its probe group, and whether it is required."""

    group: str | None
    required: bool


class AnswerOptions(CheckOptions, total=False):
    """An answer check's options: also the items the report must not state."""

    excludes: list[str]


class Checks:
    """Ordered checks with the probe group of each (by check id)."""

    def __init__(self) -> None:
        self.items: list[CheckModel] = []
        self.groups: dict[str, str] = {}

    def __iter__(self) -> Iterator[CheckModel]:
        return iter(self.items)

    def add(
        self, kind: str, id: str, weight: float, *, group: str | None = None, required: bool = False, **fields: object
    ) -> CheckModel:
        if any(c.id == id for c in self.items):
            raise ValueError(f"check {id!r} is already defined")
        check = KINDS[kind].model_validate({"kind": kind, "id": id, "weight": weight, "required": required, **fields})
        if group:
            self.groups[id] = group
        self.items.append(check)
        return check

    def record_exists(
        self, id: str, service: str, collection: str, where: Expr, weight: float = 1.0, **opts: Unpack[CheckOptions]
    ) -> CheckModel:
        """A record matching ``where`` exists at the end (hardened to "exactly one" unless counted)."""
        return self.add("record_exists", id, weight, service=service, collection=collection, where=str(where), **opts)

    def count(
        self,
        id: str,
        service: str,
        collection: str,
        where: Expr,
        value: int,
        weight: float = 1.0,
        **opts: Unpack[CheckOptions],
    ) -> CheckModel:
        """Exactly ``value`` records match ``where``."""
        return self.add(
            "count", id, weight, service=service, collection=collection, where=str(where), value=value, **opts
        )

    def field_equals(
        self, id: str, service: str, collection: str, record_id: str, name: str, value: object, weight: float = 1.0
    ) -> CheckModel:
        """Field ``name`` of record ``record_id`` ends equal to ``value``."""
        return self.add(
            "field_equals",
            id,
            weight,
            service=service,
            collection=collection,
            record_id=record_id,
            field=name,
            value=value,
        )

    def unchanged(
        self, id: str, service: str, collection: str, allow: Expr | None = None, weight: float = 1.0
    ) -> CheckModel:
        """Nothing in the collection changed except the records ``allow`` admits (the collateral guard)."""
        allowed = None if allow is None else str(allow)
        return self.add("unchanged", id, weight, service=service, collection=collection, allow=allowed)

    def answer_contains(
        self, id: str, values: Sequence[str | list[str]], weight: float = 1.0, **opts: Unpack[AnswerOptions]
    ) -> CheckModel:
        """The report states every item (a list: one of its alternatives), and none of ``excludes`` if given."""
        return self.add("answer_contains", id, weight, values=list(values), **opts)

    def answer_number(self, id: str, value: float, tolerance: float = 0, weight: float = 2.0) -> CheckModel:
        return self.add("answer_number", id, weight, value=value, tolerance=tolerance)

    def answer_counts(self, id: str, counts: dict[str, int], weight: float = 2.0) -> CheckModel:
        """The report pairs each label with its number ("3 open tickets"): a list of every number seen does not."""
        return self.add("answer_counts", id, weight, counts=counts)

    def asked_user(self, slot: str, weight: float = 1.0) -> CheckModel:
        return self.add("asked_user", f"asked_{slot}", weight, slot=slot, group="asked")

    def confirmed_before(self, tool: str, weight: float = 1.0) -> CheckModel:
        return self.add("confirmed_before", f"confirmed_{tool}", weight, tool=tool)
