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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import ValidationError

from coworkenv.runtime.json_encoding import StoredTexts, reusable
from coworkenv.runtime.workspace import Workspace
from coworkenv.services.arguments import Arguments, compiled
from coworkenv.services.base import Service, ToolError, ToolInfo
from coworkenv.services.registry import Declared, service_tools, tool_table

# Built once: json.dumps with options builds a new encoder per call, a measurable share of a step.
_ERROR_JSON = json.JSONEncoder(ensure_ascii=False)
_encode_result = reusable(json.JSONEncoder(ensure_ascii=False, separators=(",", ":")))
_RECORD_TEXTS = StoredTexts(_encode_result)
_scan = vars(json.JSONDecoder())["scan_once"]  # json.loads's scanner (an instance attribute typeshed omits)
_TEXT = frozenset({str})
MAX_ARG_DEPTH = 32
"""Nesting of lists and objects in tool arguments; every real tool takes at most two levels."""
_NESTING = (dict, list)
_SHALLOW = 2 * MAX_ARG_DEPTH  # a text this short cannot open and close more than MAX_ARG_DEPTH brackets


def nesting_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists/dicts deeper than ``limit``, checked without recursion."""
    if type(value) is dict and limit > 0:  # the usual arguments: one object of plain values, looked at in one pass
        for child in value.values():
            if isinstance(child, _NESTING):
                break
        else:
            return False
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth >= limit:
                return True
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return False


def _long_integer(args: dict[str, Any]) -> bool:
    """Whether an object a policy built (nested at most :data:`MAX_ARG_DEPTH`) holds an integer past Python's digit
    limit for ``str()``, which no record of the call could be written with."""
    stack: list[Any] = [args]
    while stack:
        node = stack.pop()
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, int) and child.bit_length() > 14_000:
                return True
            if isinstance(child, dict | list):
                stack.append(child)
    return False


def plain_object(raw: Any) -> dict[str, Any] | None:
    """The object an argument text holds when it is exactly one JSON object with fewer brackets than
    :data:`MAX_ARG_DEPTH` (the usual call): what ``json.loads`` gives for it, decoded in one scan without its
    whitespace passes or the nesting walk (each level of nesting opens a bracket, and closes it). None for
    anything else, whose value or error the long path (:meth:`ToolRouter.parse_args`) decides."""
    if type(raw) is not str or raw[:1] != "{" or raw[-1] != "}":
        return None
    if len(raw) > _SHALLOW and raw.count("{") + raw.count("[") > MAX_ARG_DEPTH:
        return None
    try:
        value, end = _scan(raw, 0)
    except (StopIteration, ValueError):  # reported by json.loads on the long path, with its own message
        return None
    return value if end == len(raw) else None


@dataclass
class CallResult:
    ok: bool
    result: Any = None
    error: str | None = None
    args: dict[str, Any] | None = None
    info: ToolInfo | None = None

    def content(self) -> str:
        if self.ok:
            return _encode_result(self.result)
        return _encode_error(self.error)


def _encode_error(error: str | None) -> str:
    """The content of a failed call's tool message."""
    return _ERROR_JSON.encode({"error": error})


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


Plan = tuple[Arguments, str | None, Callable[..., Any] | None, Service | None]


class ToolRouter:
    def __init__(self, workspace: Workspace, tools: dict[str, ToolInfo]) -> None:
        self.ws = workspace
        self.tools = tools
        self._schemas = schema_list(tools)
        self._arguments: dict[str, Arguments] = {}
        self._plans: dict[str, Plan] = {}  # per tool called: the workspace's services are fixed, bound once

    def schemas(self) -> list[dict[str, Any]]:
        return self._schemas

    def parse_args(self, name: str, raw: str | dict[str, Any]) -> tuple[ToolInfo | None, dict[str, Any] | None, str]:
        """Resolve the tool and decode its arguments; an error message on failure."""
        info = self.tools.get(name)
        if info is None:
            return None, None, f"unknown tool {name!r}; available tools: {', '.join(sorted(self.tools))}"
        args = plain_object(raw)
        if args is not None:
            return info, args, ""
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
        return info, args, ""

    def call(
        self, name: str, raw: str | dict[str, Any], counts: dict[str, int]
    ) -> tuple[ToolInfo | None, dict[str, Any] | None, bool, str | None, str]:
        """A call with no fault, rule or event to look at in between: parse, validate, run and encode in one go,
        counting it in ``counts`` once its arguments decode. Returns the tool, the decoded arguments, whether it
        succeeded, the error and the tool message's content (as ``parse_args``, ``validate``, ``execute`` and
        :meth:`CallResult.content` give them). The usual call (plain argument text, a tool taking one text, a
        stored record read) runs without the general code's calls."""
        info = self.tools.get(name)
        args = plain_object(raw) if info is not None else None
        if info is None or args is None:  # (args is None whenever info is)
            info, args, error = self.parse_args(name, raw)
            if info is None or args is None:
                return info, args, False, error, _encode_error(error)
        counts[name] = counts.get(name, 0) + 1
        plan = self._plans.get(name)
        if plan is None:
            plan = self._plans[name] = self._plan(info)
        table, sole, method, reads = plan
        kwargs = args if sole is not None and len(args) == 1 and type(args.get(sole)) is str else table.fast(args)
        if kwargs is None:
            checked = self.validate(info, args)
            if isinstance(checked, CallResult):
                return info, args, False, checked.error, _encode_error(checked.error)
            kwargs = checked
        ok, value = _invoke(info, method, kwargs)
        if not ok:
            return info, args, False, value, _encode_error(value)
        if reads is not None:  # a read may show a stored record as it is; a write's records are new
            return info, args, True, None, _RECORD_TEXTS.text(value, reads.db)
        return info, args, True, None, _encode_result(value)

    def _plan(self, info: ToolInfo) -> Plan:
        """What a call of the tool needs, found once: its argument table, the name of its one argument when that
        is a required text (a text passes the table unchanged), its bound method (None without its service) and,
        for a read, its service (whose tables hold the records it may show as stored)."""
        table = self._table(info)
        exact = table.exact
        sole = next(iter(exact)) if table.known and not table.checks and len(exact) == 1 else None
        if sole is not None and (exact[sole] != _TEXT or table.required != {sole} or table.copies):
            sole = None
        service = self.ws.services.get(info.service)
        method = None if service is None else getattr(service, info.method)
        return table, sole, method, service if info.kind == "read" else None

    def _table(self, info: ToolInfo) -> Arguments:
        table = self._arguments.get(info.name)
        if table is None:  # compiled on first use: an episode calls a few of the tools it offers
            table = self._arguments[info.name] = compiled(info.args_model)
        return table

    def validate(self, info: ToolInfo, args: dict[str, Any]) -> dict[str, Any] | CallResult:
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
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()[:5]
            )
            return CallResult(False, error=f"invalid arguments for {info.name}: {problems}", args=args, info=info)

    def execute(self, info: ToolInfo, kwargs: dict[str, Any], args: dict[str, Any]) -> CallResult:
        """Run a validated call against its service."""
        plan = self._plans.get(info.name)
        if plan is None:
            plan = self._plans[info.name] = self._plan(info)
        ok, value = _invoke(info, plan[2], kwargs)
        if ok:
            return CallResult(True, result=value, args=args, info=info)
        return CallResult(False, error=value, args=args, info=info)


def _invoke(info: ToolInfo, method: Callable[..., Any] | None, kwargs: dict[str, Any]) -> tuple[bool, Any]:
    """(True, the result) or (False, the error message): nothing a tool raises gets out."""
    if method is None:
        return False, f"service {info.service!r} is not available"
    try:
        return True, method(**kwargs)
    except ToolError as exc:
        return False, str(exc)
    except Exception as exc:  # a bug in a tool must not end the episode
        return False, f"internal error in {info.name}: {type(exc).__name__}"
