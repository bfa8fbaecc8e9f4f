"""The journal entry of one bank job: what the build tallies, journals and (if admitted) shards."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import TypeAdapter
from typing_extensions import TypedDict


class LLMUsage(TypedDict):
    """What a model-written job cost and aimed at."""

    requests: int
    prompt_tokens: int
    completion_tokens: int
    programmatic: bool
    targets: list[str]


class Entry(TypedDict, total=False):
    """One job's entry; a rejected job has ``final``, an admitted one its spec's fields and ``line`` (its shard
    line, taken off before journaling) then ``shard``; a model-written job also ``llm``, ``audit`` and, admitted,
    its novelty ``sketch``, ``workflow`` and ``title``."""

    index: int
    blueprint: str
    rounds: int
    reasons: list[str]
    status: str
    final: list[str]
    id: str
    capabilities: list[str]
    modifiers: list[str]
    multi_turn: bool
    split: str
    interface: str
    line: str
    shard: str
    llm: LLMUsage
    audit: dict[str, object]
    sketch: list[int]
    workflow: str
    title: str


_ENTRY = TypeAdapter(Entry)


def read_entry(record: Mapping[str, object]) -> Entry:
    """A journal line's record as an entry (its fields checked: a journal is read back on resume)."""
    return _ENTRY.validate_python(record, strict=True)
