"""Loading and saving specs (YAML or JSON) with errors that name the file and the field.

A spec file is untrusted data, so loading is bounded: bytes that are not UTF-8, integers
past Python's digit limit, nesting past :data:`MAX_DEPTH`, YAML aliases that expand past
:data:`MAX_NODES` values (a "billion laughs") or :data:`MAX_TEXT` characters (one long text
referenced many times) and a key given twice in one mapping (YAML would keep the last one
silently) are all a :class:`SpecError`, never a traceback or a hang. YAML is parsed by libyaml
when it is installed (the pure-Python loader takes a minute on a few megabytes).
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import yaml
from pydantic import ValidationError

from coworkenv.spec.models import TaskSpec
from coworkenv.storage import atomic_write_text

MAX_DEPTH = 64
"""Nesting of mappings and lists in a spec document (the examples nest at most 8 deep)."""
MAX_NODES = 500_000
"""Values in a document once YAML aliases are expanded (the largest bank spec has ~3,000)."""
MAX_TEXT = 16_000_000
"""Characters of text in a document once YAML aliases are expanded."""
_MERGE = "tag:yaml.org,2002:merge"


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader, refusing a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: set[tuple[str, str]] = set()
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != _MERGE:
                    if (key.tag, key.value) in seen:
                        problem = f"key {key.value!r} given twice"
                        raise yaml.constructor.ConstructorError(None, None, problem, key.start_mark)
                    seen.add((key.tag, key.value))
        return super().construct_mapping(node, deep)  # type: ignore[no-any-return]


_YAML_LOADER = _Loader


class SpecError(ValueError):
    """A spec file that cannot be read or does not validate."""

    def __init__(self, path: str | Path, problems: list[str]) -> None:
        self.path = str(path)
        self.problems = problems
        super().__init__(f"{path}: invalid spec\n" + "\n".join(f"  - {p}" for p in problems))


def _field_path(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts) or "<root>"


def spec_from_data(data: object, source: str | Path = "<data>") -> TaskSpec:
    """Validate a parsed document into a TaskSpec, naming ``source`` and the field on error."""
    if not isinstance(data, dict):
        raise SpecError(source, [f"<root>: expected a mapping, got {type(data).__name__}"])
    problem = oversized(data)
    if problem:
        raise SpecError(source, [problem])
    try:
        return TaskSpec.model_validate(data)
    except ValidationError as exc:
        problems = [f"{_field_path(e['loc'])}: {e['msg'][:300]}" for e in exc.errors()]
        raise SpecError(source, problems) from None


def _child(where: str, key: object, depth: int, in_list: bool) -> str:
    """The field a problem is in, to three levels (deeper paths cost more to build than they tell)."""
    if depth >= 3:
        return where
    if depth == 0:
        return str(key)
    return f"{where}[{key}]" if in_list else f"{where}.{key}"


def oversized(
    data: object, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES, max_text: int = MAX_TEXT
) -> str | None:
    """Why ``data`` is too deep or too large, or None; walks without recursion and stops at the bound.

    Shared YAML aliases are walked once per reference, which is what every later stage
    (validation, hashing, rendering) would do, so the counts are the expanded size.
    """
    stack: list[tuple[dict[object, object] | list[object], str, int]] = (
        [(data, "<root>", 0)] if isinstance(data, dict | list) else []
    )
    nodes, text = 1, 0
    while stack:
        node, where, depth = stack.pop()
        items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        nodes += len(items)
        if nodes > max_nodes:
            return f"{where}: the document expands to more than {max_nodes} values (YAML aliases?)"
        if depth >= max_depth:
            return f"{where}: nested deeper than {max_depth} levels"
        for key, value in items:
            if isinstance(value, str):
                text += len(value)
                if text > max_text:
                    return f"{where}: the document expands to more than {max_text} characters of text (YAML aliases?)"
            elif isinstance(value, dict | list):
                stack.append((value, _child(where, key, depth, isinstance(node, list)), depth + 1))
    return None


SPEC_SUFFIXES = (".yaml", ".yml", ".json")
"""The file suffixes a spec may have (YAML or JSON)."""


def parse_document(text: str, suffix: str) -> object:
    """The document in ``text`` (JSON for ``.json``, else YAML); ValueError with the reason if it can't be read."""
    kind = "JSON" if suffix == ".json" else "YAML"
    try:
        data = json.loads(text) if suffix == ".json" else yaml.load(text, Loader=_YAML_LOADER)
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: JSON errors and integers past the digit limit
        raise ValueError(f"not valid {kind}: {str(exc)[:300]}") from None
    except RecursionError:
        raise ValueError(f"not valid {kind}: nested deeper than the parser can follow") from None
    problem = oversized(data)
    if problem:
        raise ValueError(problem)
    return data


def load_spec(path: str | Path) -> TaskSpec:
    """Read a ``.yaml``/``.yml``/``.json`` spec file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(path, [f"cannot read file: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError as exc:
        raise SpecError(path, [f"not UTF-8 text: invalid byte at offset {exc.start}"]) from None
    try:
        data = parse_document(text, path.suffix)
    except ValueError as exc:
        raise SpecError(path, [str(exc)]) from None
    return spec_from_data(data, path)


def spec_to_data(spec: TaskSpec) -> dict[str, object]:
    return spec.model_dump(mode="json", exclude_none=True)


def compact_json(value: object, *, sort_keys: bool = True) -> str:
    """Byte-stable JSON: no spaces, text as it is (not escaped to ASCII), keys sorted unless ``sort_keys`` is False
    (then in their order: a tool result's fields as the tool gives them). :func:`compact_bytes`, as text."""
    return compact_bytes(value, sort_keys=sort_keys).decode("utf-8", "surrogatepass")


def compact_bytes(value: object, *, sort_keys: bool = True) -> bytes:
    """:func:`compact_json` as UTF-8 bytes (what a hash reads; a lone surrogate in model text passes through).

    Written by orjson (NaN and infinities as null: JSON has no such numbers), seven times faster than the standard
    encoder on a bank's shard lines (tens of kilobytes each); what orjson refuses (an integer past 64 bits, a lone
    surrogate, a key that is not text) is written by the standard encoder with the same options, so every value has
    one encoding."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except TypeError:
        text = json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False)
        return text.encode("utf-8", "surrogatepass")


def json_object(members: Mapping[str, str]) -> str:
    """The compact JSON object of members already encoded as compact JSON: what :func:`compact_json` gives for the
    object of their values (keys sorted), without encoding them again."""
    return "{" + ",".join(f"{compact_json(k)}:{members[k]}" for k in sorted(members)) + "}"


def canonical_json(spec: TaskSpec, *, spec_id: str | None = None) -> str:
    """The spec's compact JSON (``spec_id`` in place of its id, if given): the basis of content ids, and what a
    bank's shard holds of it. Each field's value is encoded once per value object (:func:`_encoded`)."""
    members: dict[str, str] = {}
    for name in TaskSpec.model_fields:
        value = getattr(spec, name)
        if value is not None:
            members[name] = _encoded(spec, name, value)
    if spec_id is not None:
        members["id"] = compact_json(spec_id)
    return json_object(members)


_ENCODED: OrderedDict[tuple[str, int], tuple[object, str]] = OrderedDict()


def _encoded(spec: TaskSpec, name: str, value: object) -> str:
    """The compact JSON of field ``name`` of ``spec`` (whose value is ``value``), kept per value object: the spec a
    content id is taken of and its copy that holds the id share every other field's value (a realistic workspace's
    hundreds of records are most of a spec's bytes). Keyed by identity, as the workspace's validated fixtures are:
    a spec is data that nothing edits in place."""
    if isinstance(value, str | int):
        return compact_json(value)
    hit = _ENCODED.get((name, id(value)))
    if hit is not None and hit[0] is value:
        return hit[1]
    text = compact_json(spec.model_dump(mode="json", exclude_none=True, include={name})[name])
    _ENCODED[(name, id(value))] = (value, text)
    while len(_ENCODED) > 256:
        _ENCODED.popitem(last=False)
    return text


def content_id(spec: TaskSpec) -> str:
    """A content hash of the spec with its id blanked, so ids can be derived from content."""
    return hashlib.sha256(canonical_json(spec, spec_id="").encode("utf-8", "surrogatepass")).hexdigest()[:16]


def save_spec(spec: TaskSpec, path: str | Path) -> None:
    """Write YAML or JSON by suffix, atomically."""
    data = spec_to_data(spec)
    path = Path(path)
    if path.suffix == ".json":
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    atomic_write_text(path, text)


def spec_json_schema() -> dict[str, object]:
    return TaskSpec.model_json_schema()
