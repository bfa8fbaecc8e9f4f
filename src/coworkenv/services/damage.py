"""Collateral damage a service knows: the write that visibly spoils an existing record of a collection.

Each service declares one per collection where such a write exists (``Service.damage``). The verifier's
collateral-write probe makes it on a record the task is not about, and a guard must catch it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel

from coworkenv.spec.models import CallStep


@dataclass(frozen=True)
class Damage:
    """A write that visibly changes an existing record: ``field`` becomes ``value``."""

    tool: str
    id_arg: str
    field: str
    value: object
    extra: dict[str, object] = dataclasses.field(default_factory=dict)
    only_status: tuple[str, ...] = ()
    from_record: tuple[tuple[str, str], ...] = ()
    """(argument, record field) pairs, for tools that name a record by its fields instead of its id."""

    @classmethod
    def setting(
        cls, tool: str, id_arg: str, field: str, value: object, from_record: tuple[tuple[str, str], ...] = ()
    ) -> Damage:
        """The write of an update tool that takes the field's new value under the field's own name."""
        return cls(tool, id_arg, field, value, {field: value}, from_record=from_record)

    @classmethod
    def rejecting(cls, tool: str, id_arg: str, open_statuses: tuple[str, ...]) -> Damage:
        """A reject tool's write: a record still open (in one of ``open_statuses``) rejected as a duplicate."""
        return cls(tool, id_arg, "status", "rejected", {"reason": "duplicate"}, open_statuses)

    def call(self, rec: Mapping[str, object]) -> CallStep:
        """The damaging call on ``rec``."""
        named = {arg: rec[f] for arg, f in self.from_record} if self.from_record else {self.id_arg: rec["id"]}
        return CallStep(call=self.tool, args={**named, **self.extra})

    def applies_to(self, rec: Mapping[str, object], model: type[BaseModel]) -> bool:
        """Whether the write would change ``rec`` (a fixture record, its defaults read from ``model``)."""
        if self.only_status and rec.get("status", _default(model, "status")) not in self.only_status:
            return False
        return bool(rec.get(self.field, _default(model, self.field)) != self.value)


def _default(model: type[BaseModel], name: str) -> object:
    """The default of field ``name`` of a record model, found by name or by alias (declared records alias theirs)."""
    for key, info in model.model_fields.items():
        if name in (key, info.alias):
            return info.default
    return None
