"""Later stages (days) of a multi-day draft: each its own request, reference and checks.

A multi-day blueprint builds the first day as any draft does, then adds a stage per later
day with ``draft.add_stage``: the clock advance, the changes that happen in between (spec
mutations), the new request, the changes that happen during the day (stage events, on a
call the agent makes), and the stage's own reference and checks, written with the same
builders. A stage's reference stands on its own: it re-reads what it needs, since an agent
in a ``notes`` stage sees only the note it left.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from coworkenv.synth.checks import Checks
from coworkenv.synth.reference import Reference


@dataclass
class DraftStage:
    id: str
    opening: str
    advance: dict[str, object]
    reference: Reference = field(default_factory=Reference)
    checks: Checks = field(default_factory=Checks)
    mutations: list[dict[str, object]] = field(default_factory=list)
    notify: str | None = None
    context: str = "conversation"
    notes: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)

    def insert(self, service: str, collection: str, record: dict[str, object]) -> dict[str, object]:
        """A record that appears between the stages (mail that arrived overnight); returns it."""
        self.mutations.append(insertion(service, collection, record))
        return record

    def update(self, service: str, collection: str, record_id: str, changes: dict[str, object]) -> None:
        """A record someone else changed between the stages (a meeting moved, a ticket resolved)."""
        self.mutations.append(change(service, collection, record_id, changes))

    def event(self, id: str, on_tool: str, mutations: list[dict[str, object]], notify: str, **trigger: object) -> None:
        """A change during the stage, right after the agent's first call of ``on_tool`` (``when``, ``after`` in
        ``trigger``): what the day's work must notice as it goes (an approval that comes in, a correction)."""
        self.events.append({"id": id, "on_tool": on_tool, **trigger, "notify": notify, "mutations": mutations})

    def data(self, checks: list[dict[str, object]]) -> dict[str, object]:
        """The stage as spec data, with its finalized checks."""
        out: dict[str, object] = {
            "id": self.id,
            "advance": self.advance,
            "mutations": self.mutations,
            "context": self.context,
            "user": {"opening": self.opening},
            "checks": checks,
            "reference": list(self.reference),
        }
        if self.notify:
            out["notify"] = self.notify
        if self.events:
            out["events"] = self.events
        if self.notes:
            out["notes"] = self.notes
        return out


def insertion(service: str, collection: str, record: Mapping[str, object]) -> dict[str, object]:
    """A mutation that adds ``record``."""
    return {"service": service, "collection": collection, "op": "insert", "record": record}


def change(service: str, collection: str, record_id: str, changes: Mapping[str, object]) -> dict[str, object]:
    """A mutation that changes record ``record_id``'s fields."""
    return {"service": service, "collection": collection, "op": "update", "id": record_id, "record": changes}
