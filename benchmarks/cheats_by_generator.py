"""Scripted wrong agents on a bank: the share of environments each one passes, per generator.

Four cheats are scripted here, independently of the verifier's probes: every write done
twice (updates included; it counts only where the final state differs from the
reference's), stopping after the first write (with the reference's report), a bare
"Done" for every report, and the right writes on look-alike records (each record id a
write names, once the reference resolved it, swapped for another id of the same
collection; it counts only where some write named a record). Four are the verifier's
own (a damaging write elsewhere, "Shall I go ahead?" instead of a real confirmation, a
dump of every value seen, guessing instead of asking): on admitted environments they must
stay below the pass mark, so a share above 0 means a broken admission. Each cheat counts
the environments it applies to.

    python benchmarks/cheats_by_generator.py BANK [--limit 500]
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from collections import Counter
from typing import Any

from rich.console import Console
from rich.table import Table

from coworkenv.agents.oracle import OracleRun
from coworkenv.bank.store import BankError, load_bank
from coworkenv.grading.score import PASS_THRESHOLD
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.turn import AssistantTurn
from coworkenv.spec.models import AnswerStep, CallStep, TaskSpec
from coworkenv.verify.admission import play
from coworkenv.verify.perturb import is_write
from coworkenv.verify.probe_base import scripted
from coworkenv.verify.probes import PROBES

ID = re.compile(r"^([a-z]+)-(\d+)$")
VERIFIER_CHEATS = ("collateral_write", "content_free_confirm", "report_dump", "guess_without_asking")


def _writes(spec: TaskSpec) -> list[int]:
    return [i for i, s in enumerate(spec.reference) if isinstance(s, CallStep) and is_write(s.call)]


def every_write_twice(spec: TaskSpec) -> Any:
    steps: list[Any] = []
    for step in spec.reference:
        steps += [step, step] if isinstance(step, CallStep) and is_write(step.call) else [step]
    return scripted(spec, steps) if _writes(spec) else None


def stop_after_first_write(spec: TaskSpec) -> Any:
    writes = _writes(spec)
    if len(writes) < 2:
        return None
    answer = next(s for s in reversed(spec.reference) if isinstance(s, AnswerStep))
    return scripted(spec, [*spec.reference[: writes[0] + 1], answer])


def bare_done(spec: TaskSpec) -> Any:
    steps = [AnswerStep(answer="Done.") if isinstance(s, AnswerStep) else s for s in spec.reference]
    return scripted(spec, steps)


class LookAlike:
    """The reference, whose writes name another record of the same collection wherever they name one."""

    name = "look_alike_write"

    def __init__(self, spec: TaskSpec) -> None:
        self.run = OracleRun(spec)
        self.ids = {r["id"] for colls in spec.services.values() for recs in colls.values() for r in recs if "id" in r}
        self.swapped = False
        """Whether some write named another record (else the run is the reference's and proves nothing)."""

    def _other(self, value: Any) -> Any:
        m = ID.match(value) if isinstance(value, str) else None
        if m is None or value not in self.ids:
            return value
        for n in itertools.chain(range(int(m.group(2)) + 1, 200), range(1, int(m.group(2)))):
            if f"{m.group(1)}-{n}" in self.ids:
                self.swapped = True
                return f"{m.group(1)}-{n}"
        return value

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        turn = self.run.act(messages, tools)
        calls = []
        for call in turn.tool_calls:
            if is_write(call.name) and isinstance(call.arguments, dict):
                call = call.model_copy(update={"arguments": {k: self._other(v) for k, v in call.arguments.items()}})
            calls.append(call)
        return turn.model_copy(update={"tool_calls": calls})


def look_alike_write(spec: TaskSpec) -> Any:
    return LookAlike(spec) if _writes(spec) else None


SCRIPTED = {f.__name__: f for f in (every_write_twice, stop_after_first_write, bare_done, look_alike_write)}


def _verifier(name: str, spec: TaskSpec) -> Any:
    variants = PROBES[name].variants(spec)
    return variants[0][1] if variants else None


def measure(bank: str, limit: int | None = None) -> dict[str, dict[str, Counter[str]]]:
    """Per generator: for each cheat, how many environments it applied to (``ran``) and passed (``passed``)."""
    out: dict[str, dict[str, Counter[str]]] = {}
    for spec, _ in itertools.islice(load_bank(bank), limit):
        generator = "composed" if spec.description.startswith("composed: ") else "blueprints"
        tally = out.setdefault(generator, {"ran": Counter(), "passed": Counter()})
        policies = {n: f(spec) for n, f in SCRIPTED.items()} | {n: _verifier(n, spec) for n in VERIFIER_CHEATS}
        reference = play(Environment(spec), OracleRun(spec)).state_hash
        for name, policy in policies.items():
            if policy is None:
                continue
            played = play(Environment(spec), policy)
            passed = played.grade.score >= PASS_THRESHOLD
            if name == "every_write_twice" and played.state_hash == reference:
                continue  # every write repeated was an update that changed nothing more: no harm done
            if getattr(policy, "swapped", True):
                tally["ran"][name] += 1
                tally["passed"][name] += passed
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bank")
    ap.add_argument("--limit", type=int, default=None, help="only the first N environments")
    args = ap.parse_args()
    console = Console()
    try:
        results = measure(args.bank, args.limit)
    except (BankError, OSError, ValueError) as exc:
        console.print(f"[red]{args.bank}: {exc}[/red]")
        sys.exit(2)
    for generator, tally in results.items():
        table = Table(title=f"{args.bank}: cheats on {generator} environments")
        for col in ("cheat", "applied to", "passed", "share passing"):
            table.add_column(col)
        for name in (*SCRIPTED, *VERIFIER_CHEATS):
            ran, passed = tally["ran"][name], tally["passed"][name]
            table.add_row(name, str(ran), str(passed), f"{passed / ran:.1%}" if ran else "n/a")
        console.print(table)


if __name__ == "__main__":
    main()
