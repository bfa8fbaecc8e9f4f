"""A spec's interface laid over its tools: the table the router resolves shown names and arguments with.

:func:`interface_problems` says what in an interface does not fit the tools of the spec's services (a tool or
argument it names that does not exist, two tools or arguments shown under one name); :func:`shown_tools` builds
the table of an interface without problems.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from coworkenv.services.base import ToolInfo
from coworkenv.spec.interface import Interface


class InterfaceError(ValueError):
    """An interface that does not fit the tools it renders."""


@dataclass(frozen=True)
class ShownTool:
    """One exposed tool under an interface: the tool, its shown name, schema and argument names."""

    info: ToolInfo
    name: str
    schema: dict[str, Any]
    canonical: dict[str, str]
    """Every shown argument name -> the tool's own."""
    shown: dict[str, str]
    """Every argument of the tool -> its shown name."""

    def arguments(self, args: dict[str, object]) -> dict[str, object] | str:
        """The call's arguments under the tool's own names, or the error for an argument it does not take."""
        canonical = self.canonical
        out = {}
        for key, value in args.items():
            name = canonical.get(key)
            if name is None:
                return f"unknown argument {key!r} for {self.name}; its arguments: {', '.join(canonical) or 'none'}"
            out[name] = value
        return out


def arguments_of(info: ToolInfo) -> tuple[str, ...]:
    """A tool's argument names as a call gives them (a declared tool's by their aliases)."""
    return _fields(info.args_model)


@lru_cache(maxsize=4096)
def _fields(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(f.alias or n for n, f in model.model_fields.items())


def interface_problems(interface: Interface, every: dict[str, ToolInfo]) -> list[str]:
    """What in ``interface`` does not fit ``every`` (all tools of the spec's services), each naming its field."""
    out = []
    for tool, shown in interface.tools.items():
        where = f"interface.tools.{tool}"
        info = every.get(tool)
        if info is None:
            out.append(f"{where}: not a tool of this spec's services")
            continue
        own = arguments_of(info)
        for arg, name in shown.args.items():
            if arg not in own:
                out.append(f"{where}.args.{arg}: {tool} has no argument {arg!r}; its arguments: {', '.join(own)}")
            elif name in own and name not in shown.args:
                out.append(f"{where}.args.{arg}: {name!r} is already the name of another argument of {tool}")
    names: dict[str, str] = {}
    for tool in every:
        name = interface.tool_name(tool)
        if name in names:
            out.append(f"interface.tools: {names[name]!r} and {tool!r} are both shown as {name!r}")
        names[name] = tool
    return out


def shown_tools(interface: Interface, tools: dict[str, ToolInfo], every: dict[str, ToolInfo]) -> dict[str, ShownTool]:
    """The exposed ``tools`` by shown name (raises :class:`InterfaceError` on the problems of the interface).

    Kept for the latest interfaces, read-only like the schemas: every environment of a spec (the verifier makes
    many) shows the same table, and building it cost more than the rest of making one."""
    shown, all_tools = tuple(tools.values()), tuple(every.values())
    hit = _TABLES.get(id(interface))
    if hit is not None and hit[0] is interface and _same(hit[1], shown) and _same(hit[2], all_tools):
        return hit[3]
    table = _table(interface, tools, every)
    if len(_TABLES) >= 256:
        _TABLES.clear()
    _TABLES[id(interface)] = (interface, shown, all_tools, table)  # held: the id is not reused while kept
    return table


def _same(a: tuple[ToolInfo, ...], b: tuple[ToolInfo, ...]) -> bool:
    return len(a) == len(b) and all(map(operator.is_, a, b))


_TABLES: dict[int, tuple[Interface, tuple[ToolInfo, ...], tuple[ToolInfo, ...], dict[str, ShownTool]]] = {}


def _table(interface: Interface, tools: dict[str, ToolInfo], every: dict[str, ToolInfo]) -> dict[str, ShownTool]:
    problems = interface_problems(interface, every)
    if problems:
        raise InterfaceError("; ".join(problems))
    out = {}
    for tool, info in tools.items():
        rendering = interface.tools.get(tool)
        renames = rendering.args if rendering is not None else {}
        shown = {a: renames.get(a, a) for a in arguments_of(info)}
        name = interface.tool_name(tool)
        description = rendering.description if rendering is not None else None
        schema = _schema(info.schema(), name, description, shown)
        out[name] = ShownTool(info, name, schema, {v: k for k, v in shown.items()}, shown)
    return out


def _schema(schema: dict[str, Any], name: str, description: str | None, shown: dict[str, str]) -> dict[str, Any]:
    """A tool's schema under its shown name, description and argument names (sharing the argument schemas of
    the tool's own, read-only like it)."""
    fn = schema["function"]
    params = dict(fn["parameters"])
    params["properties"] = {shown.get(k, k): v for k, v in params.get("properties", {}).items()}
    if "required" in params:
        params["required"] = [shown.get(k, k) for k in params["required"]]
    rendered = {**fn, "name": name, "parameters": params}
    if description is not None:
        rendered["description"] = description
    return {**schema, "function": rendered}
