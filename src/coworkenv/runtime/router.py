"""The tool router: from a named call with raw arguments to a result or an error.

Nothing a model sends can raise out of here. Unknown tools, arguments that are not JSON,
not an object, of the wrong type or missing, and failures inside a tool all come back as
an error the agent reads. So do arguments no later stage could handle: integers past
Python's digit limit and nesting past :data:`MAX_ARG_DEPTH` (which would overflow the
stack of the JSON decoder, the grader or the trajectory serialiser).
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import ValidationError

from coworkenv.runtime.ids import IdMap, environment_ids
from coworkenv.runtime.interface import ShownTool, shown_tools
from coworkenv.runtime.workspace import Workspace
from coworkenv.services.arguments import Arguments, compiled
from coworkenv.services.base import ToolError, ToolInfo
from coworkenv.services.registry import Declared, service_tools, tool_table
from coworkenv.spec.interface import Interface, TextRendering
from coworkenv.spec.io import compact_json
from coworkenv.spec.models import TaskSpec

_ERROR_JSON = json.JSONEncoder(ensure_ascii=False)
MAX_ARG_DEPTH = 32
"""Nesting of lists and objects in tool arguments; every real tool takes at most two levels."""


def nesting_exceeds(value: object, limit: int) -> bool:
    """Whether ``value`` nests lists/dicts deeper than ``limit``, checked without recursion."""
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth >= limit:
                return True
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return False


def _long_integer(args: dict[str, object]) -> bool:
    """Whether an object a policy built (nested at most :data:`MAX_ARG_DEPTH`) holds an integer past Python's digit
    limit for ``str()``, which no record of the call could be written with."""
    stack: list[object] = [args]
    while stack:
        node = stack.pop()
        for child in node.values() if isinstance(node, dict) else node if isinstance(node, list) else ():
            if isinstance(child, int) and child.bit_length() > 14_000:
                return True
            if isinstance(child, dict | list):
                stack.append(child)
    return False


@dataclass
class CallResult:
    ok: bool
    result: object = None
    error: str | None = None
    args: dict[str, object] | None = None
    info: ToolInfo | None = None

    def content(self) -> str:
        """The tool message's content: the result as compact JSON, or the error as ``{"error": ...}``."""
        if self.ok:
            return compact_json(self.result, sort_keys=False)
        return _ERROR_JSON.encode({"error": self.error})


def exposed_tools(services: list[str], tools: list[str] | None, declared: Declared = None) -> dict[str, ToolInfo]:
    """The tools an episode offers: the listed ones, or every tool of its services (declared ones included); a copy
    the caller may keep."""
    if declared:
        return _exposed(services, tools, declared)
    return dict(_builtin(tuple(services), None if tools is None else tuple(tools)))


@lru_cache(maxsize=1024)
def _builtin(services: tuple[str, ...], tools: tuple[str, ...] | None) -> dict[str, ToolInfo]:
    """Built-in tools per spec shape, not per episode: scanning every tool of every service was a measurable share
    of building an Environment."""
    return _exposed(list(services), None if tools is None else list(tools), None)


def _exposed(services: list[str], tools: list[str] | None, declared: Declared) -> dict[str, ToolInfo]:
    if tools is None:
        return service_tools(services, declared)
    table = tool_table(declared)
    return {n: table[n] for n in tools}


def exposed_names(services: Iterable[str], tools: list[str] | None, declared: Declared = None) -> set[str]:
    """The names of the tools ``exposed_tools`` offers, without failing on an unknown listed name.

    The verifier asks this of a spec it has not yet judged, which may list a tool that does not
    exist; the environment's ``exposed_tools`` only ever sees admitted specs.
    """
    if tools is not None:
        return set(tools)
    if declared:
        return set(service_tools(services, declared))
    return {n for service in services for n in _tools_of(service)}


@lru_cache(maxsize=64)
def _tools_of(service: str) -> tuple[str, ...]:
    return tuple(service_tools([service]))


_SCHEMA_LISTS: dict[tuple[str, ...], tuple[tuple[ToolInfo, ...], list[dict[str, Any]]]] = {}
_SCHEMA_LISTS_MAX = 1024


def schema_list(tools: dict[str, ToolInfo]) -> list[dict[str, Any]]:
    """The tools' schemas as one list per spec shape (the same tools, the very same objects), shared by every
    environment of that shape and read-only like each schema: building it per environment was a share of making
    one."""
    infos = tuple(tools.values())
    key = tuple(tools)
    hit = _SCHEMA_LISTS.get(key)
    if hit is None or not all(map(operator.is_, hit[0], infos)):
        if len(_SCHEMA_LISTS) >= _SCHEMA_LISTS_MAX:  # declared services make new tools per spec: stay bounded
            _SCHEMA_LISTS.clear()
        hit = _SCHEMA_LISTS[key] = (infos, [info.schema() for info in infos])
    return hit[1]


def _where(loc: tuple[int | str, ...], names: dict[str, str]) -> str:
    """A validation error's location, its argument under the name the agent knows it by."""
    parts = [str(names.get(p, p)) if i == 0 and isinstance(p, str) else str(p) for i, p in enumerate(loc)]
    return ".".join(parts) or "arguments"


class ToolRouter:
    """Resolves and runs the calls of one environment; under an ``interface``, by the names it shows (``every``:
    all tools of the spec's services, which the interface's names must keep apart) and, with ``ids``, the ids."""

    def __init__(
        self,
        workspace: Workspace,
        tools: dict[str, ToolInfo],
        interface: Interface | None = None,
        every: dict[str, ToolInfo] | None = None,
        ids: IdMap | None = None,
    ) -> None:
        self.ws = workspace
        self.tools = tools
        self.interface = interface
        self.ids = ids
        self._arguments: dict[str, Arguments] = {}
        self._shown: dict[str, ShownTool] | None = None
        self._labels: dict[str, ShownTool] = {}
        if interface is None:
            self._schemas = schema_list(tools)
        else:
            self._shown = shown_tools(interface, tools, tools if every is None else every)
            self._labels = {t.info.name: t for t in self._shown.values()}
            self._schemas = [t.schema for t in self._shown.values()]

    def schemas(self) -> list[dict[str, Any]]:
        return self._schemas

    def shown_name(self, info: ToolInfo) -> str:
        """The name the agent knows ``info`` by."""
        shown = self._labels.get(info.name)
        return info.name if shown is None else shown.name

    def parse_args(
        self, name: str, raw: str | dict[str, object]
    ) -> tuple[ToolInfo | None, dict[str, object] | None, str]:
        """Resolve the tool and decode its arguments (under the tool's own argument names); an error message on
        failure."""
        shown = None
        if self._shown is None:
            info = self.tools.get(name)
        else:
            shown = self._shown.get(name)
            info = None if shown is None else shown.info
        if info is None:
            known = self.tools if self._shown is None else self._shown
            return None, None, f"unknown tool {name!r}; available tools: {', '.join(sorted(known))}"
        if isinstance(raw, str):
            try:
                args = json.loads(raw) if raw and not raw.isspace() else {}
            except json.JSONDecodeError as exc:
                return info, None, f"arguments for {name} are not valid JSON ({exc.msg} at char {exc.pos})"
            except (ValueError, RecursionError) as exc:  # a huge integer; nesting past the decoder's stack
                return info, None, f"arguments for {name} cannot be decoded: {str(exc)[:120]}"
        else:
            args = raw
        if not isinstance(args, dict):
            return info, None, f"arguments for {name} must be a JSON object, got {type(args).__name__}"
        if nesting_exceeds(args, MAX_ARG_DEPTH):
            return info, None, f"arguments for {name} are nested deeper than {MAX_ARG_DEPTH} levels"
        if isinstance(raw, dict) and _long_integer(args):  # decoded text cannot hold one: json.loads refuses it
            return info, None, f"arguments for {name} hold an integer too long to write as JSON"
        if self.ids is not None:  # the ids the agent was shown, read back before anything else sees the call
            args = {k: self.ids.map_value(v, self.ids.into) for k, v in args.items()}
        if shown is not None:
            renamed = shown.arguments(args)
            if isinstance(renamed, str):
                return info, None, renamed
            args = renamed
        return info, args, ""

    def canonical_args(self, name: str, args: dict[str, object]) -> dict[str, object]:
        """A call's arguments under its tool's own names (as given where the tool or an argument is unknown)."""
        shown = self._shown.get(name) if self._shown is not None else None
        renamed = shown.arguments(args) if shown is not None else args
        return args if isinstance(renamed, str) else renamed

    def _table(self, info: ToolInfo) -> Arguments:
        table = self._arguments.get(info.name)
        if table is None:  # compiled on first use: an episode calls a few of the tools it offers
            table = self._arguments[info.name] = compiled(info.args_model)
        return table

    def validate(self, info: ToolInfo, args: dict[str, object]) -> dict[str, object] | CallResult:
        """The call's keyword arguments, or the error outcome of a call whose arguments don't fit the schema.

        Plain arguments pass an exact-type table (:mod:`coworkenv.services.arguments`); the rest go to the
        tool's argument model, whose errors the agent reads."""
        table = self._table(info)
        kwargs = table.fast(args)
        if kwargs is not None:
            return kwargs
        try:
            return table.validated(args)
        except ValidationError as exc:
            shown = self._labels.get(info.name)
            names = shown.shown if shown is not None else {}
            problems = "; ".join(f"{_where(e['loc'], names)}: {e['msg']}" for e in exc.errors()[:5])
            error = f"invalid arguments for {self.shown_name(info)}: {problems}"
            return CallResult(False, error=error, args=args, info=info)

    def execute(self, info: ToolInfo, kwargs: dict[str, object], args: dict[str, object]) -> CallResult:
        """Run a validated call against its service."""
        service = self.ws.services.get(info.service)
        if service is None:
            return CallResult(False, error=f"service {info.service!r} is not available", args=args, info=info)
        try:
            result = getattr(service, info.method)(**kwargs)
        except ToolError as exc:  # its message may name another tool: by the name the agent knows it by
            error = str(exc) if self.interface is None else TextRendering(self.interface)(str(exc))
            return CallResult(False, error=error, args=args, info=info)
        except Exception as exc:  # a bug in a tool must not end the episode
            error = f"internal error in {self.shown_name(info)}: {type(exc).__name__}"
            return CallResult(False, error=error, args=args, info=info)
        return CallResult(True, result=result, args=args, info=info)

    def content(self, outcome: CallResult) -> str:
        """The tool message's content of ``outcome``, its result rendered under the interface."""
        if self.interface is None or not outcome.ok or outcome.info is None:
            return outcome.content()
        return compact_json(self.interface.render_result(outcome.info.name, outcome.result), sort_keys=False)


def spec_router(spec: TaskSpec, workspace: Workspace) -> ToolRouter:
    """The router of an environment of ``spec`` (raises :class:`~coworkenv.runtime.interface.InterfaceError` for an
    interface that does not fit the spec's tools)."""
    services, declared = list(spec.services), spec.declared_services
    tools = exposed_tools(services, spec.tools, declared)
    if spec.interface is None:
        return ToolRouter(workspace, tools)
    every = exposed_tools(services, None, declared)
    return ToolRouter(workspace, tools, spec.interface, every, environment_ids(spec, workspace))
