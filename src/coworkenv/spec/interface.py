"""How an environment's tools look to the agent: tool and argument names, descriptions, result shape.

An interface is a rendering over the tools' own operations. The runtime turns what the agent sends back into the
canonical tool and arguments before anything else sees the call, and renders each result on its way out; the
checks, rules, events, faults, the reference and the grade name canonical tools and never see the rendering.
Text the agent reads that names a tool (:class:`TextRendering`) is rendered too: a synthesized spec's once its
interface is drawn, a service's error message on its way out. ``None`` (a spec without one) shows every tool
as its service defines it.

An :class:`IdStyle` shows the ids the services make (``tkt-104``) in another form (``TKT-104``, ``tkt_104``,
``ticket-00104``, ``T104``): an exact bijection, each shown form the rendering of one canonical id. The runtime
(:mod:`coworkenv.runtime.ids`) applies it to every text that goes out and comes in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from coworkenv.spec.base import SpecModel

NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"
"""A tool or argument name as function-calling APIs accept it."""
Name = Annotated[str, Field(pattern=NAME_PATTERN)]
Order = Literal["as_is", "sorted", "reversed"]
ORDERS: tuple[Order, ...] = ("as_is", "sorted", "reversed")


def _clashes(renames: Mapping[str, str]) -> list[str]:
    """The shown names two canonical names map to."""
    seen: dict[str, str] = {}
    out = []
    for canonical, shown in renames.items():
        if shown in seen:
            out.append(f"{seen[shown]!r} and {canonical!r} both render as {shown!r}")
        seen[shown] = canonical
    return out


class ToolRendering(SpecModel):
    """One tool as the agent sees it; what is not given stays canonical."""

    name: Name | None = Field(None, description="the tool's shown name")
    description: str | None = Field(None, min_length=1, max_length=2000)
    args: dict[str, Name] = Field(default_factory=dict, description="canonical argument name -> shown name")
    results: dict[str, Name] = Field(
        default_factory=dict, description="canonical key of the tool's result object -> shown key"
    )

    @model_validator(mode="after")
    def _one_to_one(self) -> ToolRendering:
        for label, renames in (("args", self.args), ("results", self.results)):
            clashes = _clashes(renames)
            if clashes:
                raise ValueError(f"{label}: {'; '.join(clashes)}")
        return self


PREFIX_PATTERN = r"^[a-z]{1,24}$"
"""An id prefix, canonical or shown: lower-case letters (the style gives the case)."""
Prefix = Annotated[str, Field(pattern=PREFIX_PATTERN)]
CANONICAL_ID = re.compile(r"([a-z]+)-(0|[1-9][0-9]*)")
"""The ids an id style renders: those the services make, ``<prefix>-<n>``; every other id is shown as it is."""


class IdStyle(SpecModel):
    """How ids ``<prefix>-<n>`` are shown: the prefix renamed and cased, a separator, the number zero-padded."""

    case: Literal["lower", "upper"] = Field("lower", description="the case of the shown prefix")
    separator: Literal["-", "_", ""] = Field("-", description="between the prefix and the number")
    width: int = Field(0, ge=0, le=12, description="digits the number is zero-padded to (0: as it is)")
    prefixes: dict[Prefix, Prefix] = Field(
        default_factory=dict, description="canonical prefix -> shown prefix (one left out is shown as it is)"
    )

    @model_validator(mode="after")
    def _exact(self) -> IdStyle:
        clashes = _clashes(self.prefixes)
        if clashes:
            raise ValueError(f"prefixes: {'; '.join(clashes)}")
        if self.case == "lower" and self.separator == "-" and self.width <= 1 and self._renamed_none():
            raise ValueError("shows every id as it is; leave the id style out instead")
        return self

    def _renamed_none(self) -> bool:
        return all(k == v for k, v in self.prefixes.items())

    def render(self, rid: str) -> str:
        """The shown form of ``rid`` (an id not of the form ``<prefix>-<n>`` is shown as it is)."""
        m = CANONICAL_ID.fullmatch(rid)
        return rid if m is None else self.shown(m[1], m[2])

    def shown(self, prefix: str, number: str) -> str:
        """The shown form of the canonical id ``<prefix>-<number>``."""
        name = self.prefixes.get(prefix, prefix)
        return (name.upper() if self.case == "upper" else name) + self.separator + number.zfill(self.width)

    def parse(self, shown: str) -> str | None:
        """The canonical id whose shown form is exactly ``shown``, or None when it is no id's."""
        pattern, back = _reader(self.case, self.separator, tuple(self.prefixes.items()))
        m = pattern.fullmatch(shown)
        if m is None:
            return None
        name = m[1].lower()
        prefix = back.get(name, name)
        rid = f"{prefix}-{int(m[2])}"
        return rid if self.render(rid) == shown else None


@lru_cache(maxsize=256)
def _reader(case: str, separator: str, prefixes: tuple[tuple[str, str], ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    """The pattern of a style's shown ids and its shown prefix -> canonical prefix (made once per style)."""
    letters = "[A-Z]+" if case == "upper" else "[a-z]+"
    return re.compile(f"({letters}){re.escape(separator)}([0-9]+)"), {v: k for k, v in prefixes}


class Interface(SpecModel):
    """Per tool (by canonical name) its rendering, and the order of fields in result objects."""

    style: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="the naming family (held-out splits go by it)")
    tools: dict[str, ToolRendering] = Field(default_factory=dict)
    order: Order = Field("as_is", description="fields of result objects: as the service gives them, sorted, reversed")
    ids: IdStyle | None = Field(None, description="how record ids are shown (None: as the services make them)")

    @model_validator(mode="after")
    def _one_to_one(self) -> Interface:
        clashes = _clashes({t: r.name for t, r in self.tools.items() if r.name is not None})
        if clashes:
            raise ValueError(f"tools: {'; '.join(clashes)}")
        return self

    def tool_name(self, tool: str) -> str:
        """The name ``tool`` (canonical) is shown under."""
        shown = self.tools.get(tool)
        return tool if shown is None or shown.name is None else shown.name

    def render_call(self, tool: str, args: object) -> tuple[str, Any]:
        """A canonical call as the agent makes it under this interface: shown name, shown argument names."""
        shown = self.tools.get(tool)
        if shown is None:
            return tool, args
        if isinstance(args, dict) and shown.args:
            args = {shown.args.get(k, k): v for k, v in args.items()}
        return shown.name or tool, args

    def canonical_call(self, name: str, args: object) -> tuple[str, object] | None:
        """A call as the agent makes it under this interface (``name`` shown), under the canonical tool and argument
        names; None for a tool the interface shows under another name, which the agent cannot call by this one."""
        tool = next((t for t, r in self.tools.items() if r.name == name), name)
        shown = self.tools.get(tool)
        if shown is None:
            return tool, args
        if tool == name and shown.name is not None:
            return None
        if isinstance(args, dict) and shown.args:
            back = {v: k for k, v in shown.args.items()}
            args = {back.get(k, k): v for k, v in args.items()}
        return tool, args

    def render_result(self, tool: str, value: object) -> object:
        """A result of ``tool`` as the agent reads it: its result keys renamed, fields in the interface's order."""
        shown = self.tools.get(tool)
        if shown is not None and shown.results and isinstance(value, dict):
            value = _renamed(value, shown.results)
        return value if self.order == "as_is" else _ordered(value, self.order == "reversed")

    def canonical_result(self, tool: str, value: object) -> object:
        """A rendered result of ``tool`` read back with the canonical keys (field order is no part of a value)."""
        shown = self.tools.get(tool)
        if shown is None or not shown.results or not isinstance(value, dict):
            return value
        return _renamed(value, {v: k for k, v in shown.results.items()})


class TextRendering:
    """Text that names tools, as the agent reads it under an interface: a tool by its shown name, and a call
    spelled out as ``<tool> with {...}`` (an instruction planted in a record, a rule quoting a call) with its
    JSON arguments under their shown names. Built once per interface, for the many texts of one spec."""

    def __init__(self, interface: Interface) -> None:
        self.interface = interface
        names = sorted((t for t, r in interface.tools.items() if r.name or r.args), key=len, reverse=True)
        self._pattern = re.compile(rf"(?<![\w-])({'|'.join(map(re.escape, names))})(?![\w-])") if names else None
        self.mark = "_" if all("_" in n for n in names) else ""
        """A character every name holds: most texts (prose, values) lack it, and searching for it is cheap (a
        text without it is returned as it is)."""

    def __call__(self, text: str) -> str:
        if self._pattern is None or self.mark not in text or self._pattern.search(text) is None:
            return text
        out: list[str] = []
        pos = 0
        for m in self._pattern.finditer(text):
            if m.start() < pos:  # inside the arguments of the call before
                continue
            tool = m.group(1)
            out += [text[pos : m.start()], self.interface.tool_name(tool)]
            pos = m.end()
            called = _WITH.match(text, pos)
            if called is None:
                continue
            try:
                args, end = _DECODER.raw_decode(text, called.end())
            except ValueError:
                continue
            shown = self.interface.render_call(tool, args)[1]
            if isinstance(args, dict) and shown != args:
                out += [text[pos : called.end()], json.dumps(shown)]
                pos = end
        rendered = "".join([*out, text[pos:]])
        return text if rendered == text else rendered


_WITH = re.compile(r"\s+with\s+(?=\{)")
_DECODER = json.JSONDecoder()


def _renamed(value: dict[str, object], renames: Mapping[str, str]) -> dict[str, object]:
    """``value`` with its keys renamed; a key whose new name the object already holds keeps its own."""
    return {(renames[k] if k in renames and renames[k] not in value else k): v for k, v in value.items()}


def _ordered(value: object, reverse: bool) -> object:
    """``value`` with the fields of every object in it sorted (or reversed), lists kept in their order."""
    if isinstance(value, dict):
        items = reversed(value.items()) if reverse else sorted(value.items())
        return {k: _ordered(v, reverse) if isinstance(v, dict | list) else v for k, v in items}
    if isinstance(value, list):
        return [_ordered(v, reverse) if isinstance(v, dict | list) else v for v in value]
    return value
