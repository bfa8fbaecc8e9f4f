"""Workflow diversity of a bank: how many distinct workflows it holds, not how many environments.

``measure(bank)`` streams a bank and tallies, per generator (``blueprints``, ``composed``)
and overall: distinct reference tool sequences, distinct ordered tool sets (each tool once,
in first-call order), how many environments call each tool, the spread of chain lengths
(composed workflows), the share of environments whose reference crosses three or more
services, the distinct tool interfaces shown (each exposed tool's shown name with its shown
argument names) and id styles, the catalogue domains used, and the workspace sizes (records per environment).
``Tally.rows`` lays the figures out for a table; ``bank stats`` and
``benchmarks/diversity.py`` both print them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

from coworkenv.bank.store import load_bank
from coworkenv.runtime.interface import arguments_of
from coworkenv.runtime.router import exposed_tools
from coworkenv.services.registry import tool_table
from coworkenv.spec.models import CallStep, TaskSpec

COMPOSED_PREFIX = "composed: "
"""How a composed workflow's description starts: then its steps, joined by `` > ``."""
GROUPS = ("all", "blueprints", "composed")


def calls(spec: TaskSpec) -> tuple[str, ...]:
    """The tools the reference calls, in order, stages included."""
    refs = (spec.reference, *(stage.reference for stage in spec.stages or []))
    return tuple(step.call for ref in refs for step in ref if isinstance(step, CallStep))


def generator_of(spec: TaskSpec) -> str:
    """``composed`` for a composed workflow, else ``blueprints``."""
    return "composed" if spec.description.startswith(COMPOSED_PREFIX) else "blueprints"


@dataclass
class Tally:
    """Diversity figures of one group of environments."""

    envs: int = 0
    sequences: set[tuple[str, ...]] = field(default_factory=set)
    tool_sets: set[tuple[str, ...]] = field(default_factory=set)
    tools: Counter[str] = field(default_factory=Counter)
    """How many environments call each tool."""
    lengths: Counter[int] = field(default_factory=Counter)
    """Composed workflows by their number of steps."""
    wide: int = 0
    """Environments whose reference calls tools of three or more services."""
    interfaces: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)
    id_styles: Counter[str] = field(default_factory=Counter)
    """Environments per id style (see :func:`id_style_of`)."""
    domains: Counter[str] = field(default_factory=Counter)
    """Environments per declared service (the catalogue's domains)."""
    records: list[int] = field(default_factory=list)
    """Records per environment's workspace."""

    def add(self, spec: TaskSpec) -> None:
        seq = calls(spec)
        self.envs += 1
        self.sequences.add(seq)
        self.tool_sets.add(tuple(dict.fromkeys(seq)))
        self.tools.update(set(seq))
        if generator_of(spec) == "composed":
            self.lengths[len(spec.description.removeprefix(COMPOSED_PREFIX).split(" > "))] += 1
        self.wide += len({c.split("_", 1)[0] for c in seq}) >= 3
        self.interfaces |= interfaces_of(spec)
        self.id_styles[id_style_of(spec)] += 1
        self.domains.update(list(spec.declared_services or {}))  # one environment per service it declares
        self.records.append(sum(len(rows) for colls in spec.services.values() for rows in colls.values()))

    def unused(self) -> list[str]:
        """The built-in tools no reference of this group calls."""
        return sorted(set(tool_table()) - set(self.tools))

    def rare(self, min_envs: int) -> list[str]:
        """The built-in tools fewer than ``min_envs`` environments call (unused ones included)."""
        return sorted(t for t in tool_table() if self.tools[t] < min_envs)

    def rows(self, min_envs: int = 20) -> list[tuple[str, str]]:
        """The figures as (name, value) rows."""
        builtin = set(tool_table())
        used = builtin & set(self.tools)
        rare = [t for t in self.rare(min_envs) if t in used]
        spread = ", ".join(f"{k}: {v}" for k, v in sorted(self.lengths.items())) or "n/a"
        return [
            ("environments", str(self.envs)),
            ("distinct reference tool sequences", str(len(self.sequences))),
            ("distinct ordered tool sets", str(len(self.tool_sets))),
            ("built-in tools used", f"{len(used)} of {len(builtin)}"),
            ("built-in tools no reference uses", f"{len(builtin - used)}: {', '.join(self.unused())}"),
            (f"tools used by fewer than {min_envs} environments", f"{len(rare)}: {', '.join(rare)}"),
            ("chain lengths (steps: environments)", spread),
            ("share crossing >= 3 services", f"{self.wide / self.envs:.1%}" if self.envs else "n/a"),
            ("distinct tool interfaces (name + arguments)", str(len(self.interfaces))),
            ("id styles (environments)", ", ".join(f"{k} {n}" for k, n in sorted(self.id_styles.items()))),
            ("domains used", f"{len(self.domains)}: {', '.join(f'{d} {n}' for d, n in self.domains.most_common())}"),
            ("workspace records: median / p10 / max", self._sizes()),
        ]

    def headline(self) -> str:
        """The figures a one-line summary shows (the main job's)."""
        return (
            f"{len(self.sequences)} tool sequences, {len(self.tool_sets)} tool sets, "
            f"{len(self.interfaces)} tool interfaces, {len(self.domains)} domains; "
            f"workspace records median / p10 / max {self._sizes()}"
        )

    def _sizes(self) -> str:
        if not self.records:
            return "n/a"
        ordered = sorted(self.records)
        return f"{median(ordered):.0f} / {ordered[len(ordered) // 10]} / {ordered[-1]}"


def interfaces_of(spec: TaskSpec) -> set[tuple[str, tuple[str, ...]]]:
    """The tool interfaces an environment shows: each exposed tool's shown name and its shown argument names."""
    shown = spec.interface
    out = set()
    for tool, info in exposed_tools(list(spec.services), spec.tools, spec.declared_services).items():
        rendering = shown.tools.get(tool) if shown is not None else None
        renames = rendering.args if rendering is not None else {}
        args = tuple(sorted(renames.get(a, a) for a in arguments_of(info)))
        out.add((shown.tool_name(tool) if shown is not None else tool, args))
    return out


def id_style_of(spec: TaskSpec) -> str:
    """The form an environment shows ids in, as a ticket's would be: ``tkt-104`` (as the services make them),
    ``TKT-104``, ``tkt_104``, ``ticket-00104`` (prefixes named), ``T104`` (prefixes shortened)."""
    ids = spec.interface.ids if spec.interface is not None else None
    if ids is None:
        return "tkt-104"
    longer = sum(len(v) - len(k) for k, v in ids.prefixes.items())
    word = "ticket" if longer > 0 else "t" if longer < 0 else "tkt"
    return (word.upper() if ids.case == "upper" else word) + ids.separator + "104".zfill(ids.width)


def measure(bank: str | Path) -> dict[str, Tally]:
    """The bank's figures by generator (``blueprints``, ``composed``) and ``all``, streamed spec by spec."""
    tallies = {name: Tally() for name in GROUPS}
    for spec, _ in load_bank(bank):
        tallies["all"].add(spec)
        tallies[generator_of(spec)].add(spec)
    return {k: t for k, t in tallies.items() if t.envs}
