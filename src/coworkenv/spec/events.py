"""Scheduled changes of the workspace (events and the mutations they make) and injected tool faults."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from coworkenv.spec.base import SpecModel as _Model

Record = dict[str, object]


class Mutation(_Model):
    """A direct change of the workspace made by an event (or between stages).

    An update or delete names its record by ``id``, or by ``where``: a selector over the
    live records, evaluated when the change is made, so that it can reach a record the
    agent created earlier (the ticket it opened yesterday). The first record of the
    collection (in its order) that matches is changed; when none matches, nothing is.
    """

    service: str
    collection: str
    op: Literal["insert", "update", "delete"]
    record: Record | None = Field(None, description="the new record (insert) or changed fields (update)")
    id: str | None = Field(None, description="the record changed or deleted")
    where: str | None = Field(
        None,
        description="update/delete, instead of 'id': an expression over the record as 'r' (no templates) that "
        "picks the live record when the change is made, e.g. one the agent created; the first match is changed",
    )

    @model_validator(mode="after")
    def _shape(self) -> Mutation:
        if self.op == "insert" and not (self.record and "id" in self.record):
            raise ValueError("insert needs 'record' with an 'id'")
        if self.op == "insert" and self.where is not None:
            raise ValueError("insert takes no 'where': it names its new record by record.id")
        if self.op in ("update", "delete") and (self.id is None) == (self.where is None):
            raise ValueError(f"{self.op} needs exactly one of 'id' and 'where'")
        if self.op == "update" and not self.record:
            raise ValueError("update needs 'record' with the changed fields")
        if self.where is not None and "${" in self.where:
            raise ValueError("'where' reads the record as 'r' only: no '${...}' templates")
        return self


class Event(_Model):
    """A scheduled change of the workspace during the episode.

    An ``on_tool`` event may filter the triggering calls (``when``), wait ``after`` steps,
    fire again on every matching call (``once: false``), and template its mutations and
    notice from the triggering call's arguments (``${args.thread_id}``).
    """

    id: str = Field(description="unique across the spec and its stages")
    after_step: int | None = Field(None, ge=0, description="fire once this many steps are done")
    on_tool: str | None = Field(None, description="fire right after the first successful call of this tool")
    when: str | None = Field(
        None, description="on_tool only: an expression over the call's 'args'; other calls don't trigger"
    )
    after: int | None = Field(None, ge=1, le=1000, description="on_tool only: fire this many steps after the trigger")
    once: bool | None = Field(None, description="fire at most once (the default); false: on every matching call")
    mutations: list[Mutation] = Field(min_length=1, description="the changes it makes, one record each")
    notify: str | None = Field(None, description="a notice shown to the agent when it fires")

    @model_validator(mode="after")
    def _one_trigger(self) -> Event:
        if (self.after_step is None) == (self.on_tool is None):
            raise ValueError("give exactly one trigger: 'after_step' or 'on_tool'")
        if self.on_tool is None:
            given = [n for n in ("when", "after") if getattr(self, n) is not None] + (
                ["once"] if self.once is False else []
            )
            if given:
                raise ValueError(
                    f"'{given[0]}' needs an 'on_tool' trigger (an after_step event has no triggering call)"
                )
            if _templated([self.notify, [m.model_dump() for m in self.mutations]]):
                raise ValueError("templated values ('${...}') need an 'on_tool' trigger: there is no call to read")
        return self

    @property
    def repeats(self) -> bool:
        return self.once is False


def _templated(value: object) -> bool:
    """Whether a value holds a ``${...}`` reference anywhere (strings inside lists and dicts)."""
    if isinstance(value, str):
        return "${" in value
    if isinstance(value, list):
        return any(_templated(v) for v in value)
    if isinstance(value, dict):
        return any(_templated(v) for v in value.values())
    return False


TRANSIENT_ERROR = "503 Service Unavailable: temporary failure, please retry"


class Fault(_Model):
    """A transient tool error injected on the n-th call of a tool."""

    tool: str
    on_call: int = Field(1, ge=1)
    message: str = TRANSIENT_ERROR
