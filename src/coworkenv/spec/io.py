"""Loading and saving specs (YAML or JSON) with errors that name the file and the field."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from coworkenv.spec.models import TaskSpec


class SpecError(ValueError):
    """A spec file that cannot be read or does not validate."""

    def __init__(self, path: str | Path, problems: list[str]) -> None:
        self.path = str(path)
        self.problems = problems
        super().__init__(f"{path}: invalid spec\n" + "\n".join(f"  - {p}" for p in problems))


def _field_path(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts) or "<root>"


def spec_from_data(data: Any, source: str | Path = "<data>") -> TaskSpec:
    """Validate a parsed document into a TaskSpec, naming ``source`` and the field on error."""
    if not isinstance(data, dict):
        raise SpecError(source, [f"<root>: expected a mapping, got {type(data).__name__}"])
    try:
        return TaskSpec.model_validate(data)
    except ValidationError as exc:
        problems = [f"{_field_path(e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise SpecError(source, problems) from None


def load_spec(path: str | Path) -> TaskSpec:
    """Read a ``.yaml``/``.yml``/``.json`` spec file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(path, [f"cannot read file: {exc.strerror or exc}"]) from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise SpecError(path, [f"not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}"]) from None
    return spec_from_data(data, path)


def spec_to_data(spec: TaskSpec) -> dict[str, Any]:
    return spec.model_dump(mode="json", exclude_none=True)


def canonical_json(spec: TaskSpec) -> str:
    """Byte-stable JSON of a spec (sorted keys, no spaces): the basis of content ids."""
    return json.dumps(spec_to_data(spec), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_id(spec: TaskSpec) -> str:
    """A content hash of the spec with its id blanked, so ids can be derived from content."""
    data = spec_to_data(spec)
    data["id"] = ""
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def save_spec(spec: TaskSpec, path: str | Path) -> None:
    """Write YAML or JSON by suffix, atomically."""
    from coworkenv.storage import atomic_write_text

    data = spec_to_data(spec)
    path = Path(path)
    if path.suffix == ".json":
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    atomic_write_text(path, text)


def spec_json_schema() -> dict[str, Any]:
    return TaskSpec.model_json_schema()
