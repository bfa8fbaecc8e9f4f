"""Comparing a forked episode with a full replay: every field of the environment, not only the grade.

The fingerprint walks the environment's whole object graph generically, so a piece of state a
later change adds is compared without anyone listing it; a missed field in the fork's snapshot
then shows up as a difference here rather than as a silently changed verdict.
"""

from __future__ import annotations

import functools
import random
import types
from typing import Any

from pydantic import BaseModel

from coworkenv.runtime.environment import Environment
from coworkenv.services.base import Service

CACHES = frozenset({"_lowered", "_texts", "initial_memo", "epoch", "_epoch", "_arguments"})
"""Attributes that cache what the state or the spec determines (search texts and their indexes, facts about the
fixtures, each tool's compiled argument table) or count resets: equal states may differ in them."""


def materialize_indexes(*envs: Environment) -> None:
    """Build, in every environment, each lookup index any of them has built: an index not built yet is built from
    the records in order when first used, so only the built ones can be compared."""
    keys = {(name, key) for env in envs for name, svc in env.workspace.services.items() for key in svc._indexes}
    for env in envs:
        for name, (collection, field, lower) in keys:
            env.workspace.services[name].lookup(collection, field, None, lower=lower)


def fingerprint(env: Environment) -> Any:
    """Everything in ``env`` as plain nested lists (dict order kept: a collection's order is what tools list)."""
    seen: dict[int, str] = {}
    return _walk(env, "env", seen)


def _walk(obj: Any, path: str, seen: dict[int, str]) -> Any:
    if obj is None or isinstance(obj, str | int | float | bool):
        return obj
    if isinstance(obj, type):
        return ("class", obj.__qualname__)
    if isinstance(obj, random.Random):
        return ("rng", obj.getstate())
    if isinstance(obj, types.FunctionType | types.MethodType | types.BuiltinFunctionType | functools.partial):
        return ("callable", getattr(obj, "__qualname__", type(obj).__name__))
    if isinstance(obj, BaseModel):
        return ("model", type(obj).__name__, obj.model_dump(mode="json"))
    if isinstance(obj, dict):
        return ("dict", [(_walk(k, path, seen), _walk(v, f"{path}[{k!r}]", seen)) for k, v in obj.items()])
    if isinstance(obj, list | tuple):
        return (type(obj).__name__, [_walk(v, f"{path}[{i}]", seen) for i, v in enumerate(obj)])
    if isinstance(obj, set | frozenset):
        return ("set", sorted(repr(_walk(v, path, seen)) for v in obj))
    if id(obj) in seen:
        return ("ref", seen[id(obj)])
    seen[id(obj)] = path
    fields = vars(obj) if hasattr(obj, "__dict__") else {}
    if isinstance(obj, Service):  # an index's buckets keep an order lookups return; which was built first does not
        fields = {k: v for k, v in fields.items() if k != "on_change"} | {"_indexes": sorted(obj._indexes.items())}
        # a collection's ranks count only by their order (a deletion leaves a gap where a rebuild would not)
        fields["_positions"] = {c: sorted(p, key=p.__getitem__) for c, p in sorted(obj._positions.items())}
    return (
        type(obj).__qualname__,
        [(k, _walk(v, f"{path}.{k}", seen)) for k, v in sorted(fields.items()) if k not in CACHES],
    )


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two fingerprints first differ (for a readable failure)."""
    if a == b:
        return None
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, list | tuple):
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)}: {a!r:.300} vs {b!r:.300}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            label = x[0] if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) else i
            found = first_difference(x, y, f"{path}/{label}")
            if found:
                return found
        return None
    return None if a == b else f"{path}: {a!r:.300} vs {b!r:.300}"
