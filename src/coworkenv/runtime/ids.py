"""An interface's id style laid over one environment's ids, in every text that goes out and comes in.

Out (tool results, mail and document bodies, user turns, the prompt, notices) each id of the environment is
shown in the style; in (tool-call arguments, messages to the user, the final answer) each shown id is read back,
before routing and grading, so checks, rules, events, faults, the reference and the grade name canonical ids.
Only ids of this environment are mapped: the workspace's keys at reset and the ids created since (read from the
workspace's change log), so text that merely looks like an id is left alone.

A canonical id the interface never showed, sent by the agent, is no id of the shown world: it comes in marked
(:data:`MASK` after its prefix) so no record, search or check takes it for the id, and goes out again as the
agent wrote it ("no tickets record with id 'tkt-104'"), as a real API answers an id it does not know.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from coworkenv.runtime.interface import InterfaceError
from coworkenv.runtime.workspace import Workspace, prepared_state
from coworkenv.services.registry import service_class
from coworkenv.spec.interface import CANONICAL_ID, IdStyle
from coworkenv.spec.models import Mutation, TaskSpec

MASK = "\u2e2e"
"""Marks a canonical id the agent sent under a style that shows it otherwise: the reversed question mark, which
no workplace text holds and ``repr`` keeps as it is (a service's error quotes the id it was given)."""
TOKEN = re.compile(
    r"(?<![A-Za-z0-9_@.\-])([A-Za-z]+)(" + MASK + r"?)([-_]?)([0-9]+)(?![A-Za-z0-9_@" + MASK + r"]|[-.][A-Za-z0-9])"
)
"""A word that may be an id in some style: letters, an optional separator, digits, standing on its own."""
CANONICAL_HINT = re.compile("-(?<=[a-z" + MASK + "]-)[0-9]")
"""Where a canonical id (or a marked one) may end its letters: found at C speed, so a text without one costs
next to nothing and one with some is read only around them (a scan of every word would cost more than a step)."""
_HINTS = {
    "-": re.compile("-(?<=[A-Za-z" + MASK + "]-)[0-9]"),
    "_": re.compile("[-_](?<=[A-Za-z" + MASK + "][-_])[0-9]"),
    "": re.compile("[-0-9](?<=[A-Za-z" + MASK + "][-0-9])"),
}
"""Per separator of a style: where a shown or a canonical id may end its letters."""
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _sub(text: str, hint: re.Pattern[str], fn: Callable[[re.Match[str]], str]) -> str:
    """``text`` with each :data:`TOKEN` around a ``hint`` replaced by ``fn`` of it."""
    parts: list[str] = []
    last = 0
    for h in hint.finditer(text):
        i = h.start()
        if i < last:
            continue
        j = i - 1 if i and text[i - 1] == MASK else i
        while j and text[j - 1] in _LETTERS:
            j -= 1
        m = TOKEN.match(text, j)
        if m is None or m.end() <= i:
            continue
        parts += (text[last : m.start()], fn(m))
        last = m.end()
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


@dataclass(frozen=True)
class SpecIds:
    """What an id map of a spec starts from: the ids of its records at reset, the prefixes its records have or
    its services make (with the collections whose ids they start), and where its style shows two of them alike."""

    initial: frozenset[str]
    prefixes: frozenset[str]
    problems: tuple[str, ...]
    collections: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    shown: dict[str, str] = field(default_factory=dict)
    """Each id at reset the style shows otherwise -> its shown form, worked out once (a step looks them up)."""
    back: dict[str, str] = field(default_factory=dict)
    """The inverse of ``shown``."""


class IdMap:
    """The id style of one environment (or, for a policy that reads like the agent, of what it has been shown)."""

    def __init__(
        self, style: IdStyle, ids: SpecIds, workspace: Workspace | None = None, learned: set[str] | None = None
    ) -> None:
        self.style = style
        self.initial = ids.initial
        self.prefixes = ids.prefixes
        self.collections = ids.collections
        self.shown = ids.shown
        self.back = ids.back
        self.workspace = workspace
        self.hint = _HINTS[style.separator]
        self.learned = set() if learned is None else learned
        """Without a workspace: the ids made since the reset that :meth:`read` met (the caller's set, kept with
        its own state)."""

    def known(self, rid: str) -> bool:
        """Whether ``rid`` names a record of this environment, at reset or made since (looked up in the workspace
        itself, which a reset or a restored snapshot puts back: the map keeps no state of the episode)."""
        if rid in self.initial:
            return True
        ws = self.workspace
        if ws is None:
            return rid in self.learned
        prefix = rid.split("-", 1)[0]
        if prefix not in self.prefixes:
            return False
        if any(rid in ws.records(service, collection) for service, collection in self.collections.get(prefix, ())):
            return True
        return any(made == rid for _, _, made in ws.changes)  # made and deleted since, or made under another prefix

    def out(self, text: str) -> str:
        """``text`` as the agent reads it: each id of the environment in its shown form."""
        return _sub(text, CANONICAL_HINT, self._shown)

    def _shown(self, m: re.Match[str]) -> str:
        if m[2]:  # a canonical id the agent sent: given back as it wrote it
            return m[1] + m[3] + m[4]
        rid = m[0]
        shown = self.shown.get(rid)
        if shown is not None:  # an id at reset
            return shown
        number = m[4]
        if m[3] != "-" or not m[1].islower() or (number[0] == "0" and number != "0") or not self.known(rid):
            return rid  # not of the form the services make (CANONICAL_ID), or no id of this environment
        return self.style.shown(m[1], number)

    def into(self, text: str) -> str:
        """``text`` the agent wrote, as the environment reads it: shown ids canonical, canonical ones marked."""
        rid = self.back.get(text)  # an argument that is one id, the usual case
        return rid if rid is not None else _sub(text, self.hint, self._canonical)

    def _canonical(self, m: re.Match[str]) -> str:
        word = m[0]
        rid = self.back.get(word)
        if rid is not None:
            return rid
        if m[2]:
            return word
        if word in self.shown:
            return m[1] + MASK + m[3] + m[4]
        rid = self.style.parse(word)
        if rid is not None and self.known(rid):
            return rid
        if m[3] == "-" and self.known(word) and self.style.render(word) != word:
            return m[1] + MASK + m[3] + m[4]
        return word

    def read(self, text: str) -> str:
        """``text`` the environment showed, read back canonical by a policy (the oracle), learning the ids it names
        that the environment created: a shown id of a prefix this environment's records have."""
        return _sub(text, self.hint, self._learned)

    def _learned(self, m: re.Match[str]) -> str:
        rid = self.back.get(m[0]) or self.style.parse(m[0])
        if rid is None:
            return m[0]
        if not self.known(rid):
            if rid.split("-", 1)[0] not in self.prefixes:
                return m[0]
            self.learned.add(rid)
        return rid

    def map_value(self, value: object, text: Callable[[str], str]) -> object:
        """``value`` (tool-call arguments) with ``text`` applied to every string in it, keys kept."""
        if isinstance(value, str):
            return text(value)
        if isinstance(value, dict):
            return {k: self.map_value(v, text) for k, v in value.items()}
        if isinstance(value, list):
            return [self.map_value(v, text) for v in value]
        return value


def spec_ids(spec: TaskSpec) -> SpecIds | None:
    """The ids of ``spec`` under its id style (None without one), worked out once per spec; what comes of its
    records alone once per style and records (the verifier's probes are copies of a spec that share both)."""
    style = spec.interface.ids if spec.interface is not None else None
    if style is None:
        return None
    hit = _SPEC_IDS.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    base = _records_ids(spec, style)
    inserted = {str(m.record["id"]) for m in _mutations(spec) if m.op == "insert" and m.record and "id" in m.record}
    more = {m[1] for rid in inserted if (m := CANONICAL_ID.fullmatch(rid))}
    ids = replace(base, prefixes=base.prefixes | more, problems=base.problems + tuple(id_problems(style, inserted)))
    if len(_SPEC_IDS) >= 256:
        _SPEC_IDS.clear()
    _SPEC_IDS[id(spec)] = (spec, ids)  # the spec is held: its id cannot be reused while it is here
    return ids


_SPEC_IDS: dict[int, tuple[TaskSpec, SpecIds]] = {}


def _records_ids(spec: TaskSpec, style: IdStyle) -> SpecIds:
    """What of :func:`spec_ids` comes of the spec's services and records alone."""
    key = (id(style), id(spec.services), id(spec.declared_services))
    hit = _RECORDS_IDS.get(key)
    if hit is not None and hit[0] is style and hit[1] is spec.services and hit[2] is spec.declared_services:
        return hit[3]
    state = prepared_state(spec.services, spec.declared_services)
    initial = frozenset(rid for colls in state.values() for recs in colls.values() for rid in recs)
    collections: dict[str, list[tuple[str, str]]] = {}
    for name in spec.services:
        cls = service_class(name, spec.declared_services)
        for collection in cls.records:
            collections.setdefault(cls.id_prefix.get(collection, collection[:3]), []).append((name, collection))
    prefixes = set(collections) | {m[1] for rid in initial if (m := CANONICAL_ID.fullmatch(rid))}
    # one id of each prefix stands for those the services will make: a clash of its form is a clash of all
    problems = tuple(id_problems(style, initial | {f"{p}-1" for p in collections}))
    shown = {rid: form for rid in initial if (form := style.render(rid)) != rid}
    by_prefix = {p: tuple(c) for p, c in collections.items()}
    ids = SpecIds(initial, frozenset(prefixes), problems, by_prefix, shown, {v: k for k, v in shown.items()})
    if len(_RECORDS_IDS) >= 64:
        _RECORDS_IDS.clear()
    _RECORDS_IDS[key] = (style, spec.services, spec.declared_services, ids)  # held: their ids are not reused
    return ids


_RECORDS_IDS: dict[tuple[int, int, int], tuple[IdStyle, object, object, SpecIds]] = {}


def _mutations(spec: TaskSpec) -> list[Mutation]:
    """Every change the spec makes to the workspace on its own: its events' and its stages'."""
    stages = spec.stages or []
    events = [*spec.events, *(e for s in stages for e in s.events or [])]
    return [*(m for e in events for m in e.mutations), *(m for s in stages for m in s.mutations)]


def id_problems(style: IdStyle, ids: Iterable[str]) -> list[str]:
    """Where ``style`` is not an exact bijection over ``ids``: an id whose shown form reads back as another.

    An id of the form the services make (``<prefix>-<n>``) reads back as itself unless its prefix is shown as it
    is while another prefix is shown under that name, so only those ids and the ones of other forms are rendered
    and read back (a realistic workspace holds hundreds of ids, checked at every draw and every verification)."""
    prefixes = style.prefixes
    shadowed = {v for k, v in prefixes.items() if k != v and prefixes.get(v, v) == v}
    out = []
    for rid in sorted(ids):
        m = CANONICAL_ID.fullmatch(rid)
        if m is not None and m[1] not in shadowed:
            continue
        shown = style.render(rid)
        back = style.parse(shown)
        if back is not None and back != rid:
            out.append(f"interface.ids: {rid!r} and {back!r} are both shown as {shown!r}")
    return out


def environment_ids(spec: TaskSpec, workspace: Workspace) -> IdMap | None:
    """The id map of an environment of ``spec`` (None without an id style); raises :class:`InterfaceError` where
    the style shows two of its ids alike."""
    ids = spec_ids(spec)
    if ids is None:
        return None
    if ids.problems:
        raise InterfaceError("; ".join(ids.problems))
    assert spec.interface is not None and spec.interface.ids is not None
    return IdMap(spec.interface.ids, ids, workspace)
