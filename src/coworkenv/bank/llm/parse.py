"""A model's reply to a TaskSpec: JSON or YAML, fenced or not, with prose around it or not.

Model output is data: it is parsed with ``json``/``yaml.safe_load`` and validated by
pydantic, never evaluated. What cannot be read becomes a list of problems for the repair
prompt (the same ``field: message`` lines a spec file gets).
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from coworkenv.spec import TaskSpec, spec_from_data
from coworkenv.spec.io import SpecError

FENCE = re.compile(r"```[a-zA-Z]*[ \t]*\n(.*?)(?:\n```|\Z)", re.DOTALL)


class ReplyError(ValueError):
    """A reply that holds no valid TaskSpec; ``problems`` say why, field by field."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def _candidates(text: str) -> list[str]:
    """The fenced blocks (largest first), then the text from its first '{', then the whole text."""
    blocks = sorted((m.group(1) for m in FENCE.finditer(text)), key=len, reverse=True)
    brace = text.find("{")
    return [*blocks, *([text[brace:]] if brace >= 0 else []), text]


def _load(block: str) -> Any:
    try:
        return json.JSONDecoder().raw_decode(block.strip())[0]  # prose after the object is ignored
    except json.JSONDecodeError as exc:
        json_error = exc
    try:
        data = yaml.safe_load(block)
    except yaml.YAMLError:
        data = None
    if isinstance(data, dict):
        return data
    raise ValueError(
        f"not JSON ({json_error.msg} at line {json_error.lineno} column {json_error.colno}) nor a YAML mapping"
    )


def document(text: str) -> dict[str, Any]:
    """The first candidate block that parses to a mapping."""
    if not text.strip():
        raise ReplyError(["<reply>: empty"])
    first: str | None = None
    for block in _candidates(text):
        try:
            data = _load(block)
        except ValueError as exc:
            first = first or str(exc)
            continue
        if isinstance(data, dict):
            return data
    raise ReplyError([f"<reply>: no TaskSpec found: {first or 'no mapping'} (was the reply cut off?)"])


def parse_reply(text: str, overrides: dict[str, Any] | None = None) -> TaskSpec:
    """The TaskSpec in a reply (``overrides`` set fields the generator decides, not the model)."""
    data = document(text)
    data.update(overrides or {})
    if not isinstance(data.get("id"), str) or not data["id"]:
        data["id"] = "llm-candidate"
    try:
        return spec_from_data(data, "<reply>")
    except SpecError as exc:
        raise ReplyError(exc.problems) from None
