"""Scripted cheats on a bank: the share of admitted environments each one passes, per generator.

Each cheat replays the reference with one twist (a damaging write on another record of a
collection the reference writes, a report that dumps every value seen, a bare "Done", one
write argument swapped for a look-alike's value, every write twice, a content-free
confirmation, a stop after the first write, a guess instead of asking the user). A cheat
applies to a spec when the spec has what it twists (a report only where the spec wants one:
an answer check, or a request to be told something). It passes a spec when its run scores at
or above the pass mark: for the look-alike swap, any one swap; for the writes done twice, all
of them in one run; for these two, a run that ends in the reference's own final state does
not count. A well-made bank lets each pass well under 1 % of the specs it applies to, for
blueprint and composed workflows alike (one column each).

    python benchmarks/cheats.py [--n 300] [--seed 123] [--generator blueprints|composed|mix] [--blueprints a,b]
    python benchmarks/cheats.py --bank BANK [--limit 500]
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from coworkenv.agents.oracle import OracleRun, OracleTeacher
from coworkenv.bank.store import BankError, load_bank, synthesize_bank
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.episode import play_out
from coworkenv.runtime.turn import AssistantTurn, ToolCall
from coworkenv.services.registry import service_class
from coworkenv.spec.models import AnswerStep, CallStep, ConfirmStep, TaskSpec
from coworkenv.verify.gaming import CONTENT_FREE, Dump
from coworkenv.verify.perturb import DAMAGE, exposed, is_write
from coworkenv.verify.probe_base import before_last_answer, scripted
from coworkenv.verify.probes import PROBES

Policies = Callable[[TaskSpec, "Reference"], list[Any]]


class Reference:
    """The reference run of a spec: its final state hash, the records changed in it, and the collections its own
    writes changed (not only its events)."""

    def __init__(self, spec: TaskSpec) -> None:
        env = Environment(spec, seed=0)
        play_out(env, OracleTeacher().for_task(spec))
        self.hash = env.workspace.state_hash()
        self.changed = {(s, c, r) for s, c, r in env.workspace.changes}
        evented = {(m.service, m.collection, m.id) for e in spec.events for m in e.mutations}
        self.written = sorted({(s, c) for s, c, r in self.changed if (s, c, r) not in evented})


def collateral_in_written(spec: TaskSpec, ref: Reference) -> list[Any]:
    """One damaging write on a record the reference leaves alone, in a collection it writes (one run per collection)."""
    tools = exposed(spec)
    runs = []
    for service, collection in ref.written:
        damage = DAMAGE.get((service, collection))
        if damage is None or damage.tool not in tools or service not in spec.services:
            continue
        model = service_class(service).records[collection]
        for rec in spec.services[service].get(collection, []):
            if (service, collection, rec["id"]) not in ref.changed and damage.applies_to(rec, model):
                runs.append(scripted(spec, before_last_answer(list(spec.reference), [damage.call(rec)])))
                break
    return runs


_ASKS_REPORT = re.compile(r"\b(tell me|let me know|report|how many|how much|who|which|summar)", re.IGNORECASE)


def _answers(spec: TaskSpec) -> bool:
    """Whether the spec wants a report: an answer check, or a request that asks to be told something."""
    if not any(isinstance(s, AnswerStep) for s in spec.reference):
        return False
    users = [spec.user, *(stage.user for stage in spec.stages or [])]
    asked = [text for u in users for text in (u.opening, *(f.message for f in u.follow_ups))]
    return any(c.reads == "answer" for c in spec.all_checks) or any(_ASKS_REPORT.search(t) for t in asked)


def dump(spec: TaskSpec, ref: Reference) -> list[Any]:
    return [Dump(spec)] if _answers(spec) else []


def bare_done(spec: TaskSpec, ref: Reference) -> list[Any]:
    steps = [AnswerStep(answer="Done.") if isinstance(s, AnswerStep) else s for s in spec.reference]
    return [scripted(spec, steps)] if _answers(spec) else []


class SwapArgument:
    """The reference, with one argument of its ``index``-th write call (an id of a fixture record) replaced by
    the id of that record's look-alike (the other record of its collection sharing most field values)."""

    def __init__(self, spec: TaskSpec, index: int, look_alikes: dict[str, str]) -> None:
        self.run = OracleRun(spec)
        self.index = index
        self.look_alikes = look_alikes
        self.writes = 0

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        turn = self.run.act(messages, tools)
        calls = []
        for call in turn.tool_calls or []:
            if is_write(call.name):
                self.writes += 1
                if self.writes == self.index + 1:
                    call = self._swapped(call)
            calls.append(call)
        return AssistantTurn(content=turn.content, tool_calls=calls) if turn.tool_calls else turn

    def _swapped(self, call: ToolCall) -> ToolCall:
        args = json.loads(call.arguments_text() or "{}")
        for key, value in args.items():
            if isinstance(value, str) and value in self.look_alikes:
                args[key] = self.look_alikes[value]
                return ToolCall(id=call.id, name=call.name, arguments=json.dumps(args))
        return call


def look_alikes(spec: TaskSpec) -> dict[str, str]:
    """Each fixture record's id -> the id of the other record of its collection sharing most field values."""
    out: dict[str, str] = {}
    for colls in spec.services.values():
        for recs in colls.values():
            for rec in recs:
                others = [o for o in recs if o.get("id") != rec.get("id")]
                if others and isinstance(rec.get("id"), str):
                    shared = [sum(o.get(k) == v for k, v in rec.items() if k != "id") for o in others]
                    out[rec["id"]] = str(others[shared.index(max(shared))]["id"])
    return out


def look_alike_argument(spec: TaskSpec, ref: Reference) -> list[Any]:
    pairs = look_alikes(spec)
    writes = [s for s in spec.reference if isinstance(s, CallStep) and is_write(s.call)]
    return [SwapArgument(spec, i, pairs) for i in range(len(writes))] if pairs else []


def writes_twice(spec: TaskSpec, ref: Reference) -> list[Any]:
    steps: list[Any] = []
    for s in spec.reference:
        steps.append(s)
        if isinstance(s, CallStep) and is_write(s.call):
            steps.append(s.model_copy(update={"save_as": None, "say": None}))
    return [scripted(spec, steps)] if len(steps) > len(spec.reference) else []


def go_ahead(spec: TaskSpec, ref: Reference) -> list[Any]:
    steps = [ConfirmStep(confirm=CONTENT_FREE) if isinstance(s, ConfirmStep) else s for s in spec.reference]
    return [scripted(spec, steps)] if any(isinstance(s, ConfirmStep) for s in spec.reference) else []


def stop_after_first_write(spec: TaskSpec, ref: Reference) -> list[Any]:
    writes = [i for i, s in enumerate(spec.reference) if isinstance(s, CallStep) and is_write(s.call)]
    if len(writes) < 2:
        return []
    answers = [s for s in spec.reference if isinstance(s, AnswerStep)][-1:]
    return [scripted(spec, [*spec.reference[: writes[0] + 1], *answers])]


def guess(spec: TaskSpec, ref: Reference) -> list[Any]:
    """The verifier's own: a plausible wrong value for each fact the user holds, never asked for."""
    return [policy for _, policy in PROBES["guess_without_asking"].variants(spec)]


CHEATS: dict[str, Policies] = {
    "collateral write in a written collection": collateral_in_written,
    "report dumps every value seen": dump,
    "bare 'Done' as the report": bare_done,
    "write argument of the look-alike": look_alike_argument,
    "every write twice": writes_twice,
    "'Shall I go ahead?'": go_ahead,
    "stop after the first write": stop_after_first_write,
    "guess instead of asking": guess,
}


STATEFUL = ("write argument of the look-alike", "every write twice")
"""Cheats whose run, ending in the reference's own final state, did nothing wrong (a repeated update)."""


def passes(spec: TaskSpec, name: str, policy: Any, ref: Reference) -> bool:
    """Whether the cheat's run passes (a run that ends in the reference's own state did nothing wrong)."""
    env = Environment(spec, seed=0)
    play_out(env, policy)
    if name in STATEFUL and env.workspace.state_hash() == ref.hash:
        return False
    return env.grade().passed


Tally = dict[str, tuple[int, int, list[str]]]
"""Per cheat: specs it applies to, specs it passes, and the ids of those it passes."""


def generator_of(spec: TaskSpec) -> str:
    return "composed" if spec.description.startswith("composed: ") else "blueprints"


def tally(specs: Iterable[TaskSpec]) -> dict[str, Tally]:
    """Per generator (``blueprints``, ``composed``): each cheat's tally."""
    out: dict[str, Tally] = {}
    for spec in specs:
        ref = Reference(spec)
        counts = out.setdefault(generator_of(spec), {name: (0, 0, []) for name in CHEATS})
        for name, make in CHEATS.items():
            runs = make(spec, ref)
            if not runs:
                continue
            applies, passed, ids = counts[name]
            won = any(passes(spec, name, policy, ref) for policy in runs)
            counts[name] = (applies + 1, passed + won, [*ids, spec.id] if won else ids)
    return out


def measure(bank: str | Path, limit: int | None = None) -> dict[str, Tally]:
    """:func:`tally` over the first ``limit`` environments of a bank (all of them without)."""
    return tally(spec for spec, _ in itertools.islice(load_bank(bank), limit))


def table(results: dict[str, Tally], show: int = 0) -> str:
    """One row per cheat, one "passes/applies share" column per generator."""
    generators = sorted(results)
    lines = [f"{'cheat':<44}" + "".join(f"{g:>26}" for g in generators)]
    for name in CHEATS:
        cells = []
        for g in generators:
            applies, passed, _ = results[g][name]
            share = f"{passed / applies:.1%}" if applies else "n/a"
            cells.append(f"{f'{passed}/{applies}':>16}{share:>10}")
        lines.append(f"{name:<44}" + "".join(cells))
        lines += [f"    {g}: {spec_id}" for g in generators for spec_id in results[g][name][2][:show]]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bank", default=None, help="an existing bank (else a fresh one is built)")
    ap.add_argument("--limit", type=int, default=None, help="with --bank: only the first N environments")
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--seed", type=int, default=123)
    ap.add_argument("--generator", default="blueprints", choices=("blueprints", "composed", "mix"))
    ap.add_argument("--blueprints", default="", help="comma-separated; default: every blueprint")
    ap.add_argument("--show", type=int, default=0, help="list up to this many passed spec ids per cheat")
    args = ap.parse_args()
    try:
        if args.bank is not None:
            results = measure(args.bank, args.limit)
        else:
            names = [b for b in args.blueprints.split(",") if b] or None
            with tempfile.TemporaryDirectory() as tmp:
                bank = Path(tmp) / "bank"
                synthesize_bank(bank, args.n, seed=args.seed, blueprints=names, generator=args.generator)
                results = measure(bank)
    except (BankError, OSError, ValueError) as exc:
        print(f"{args.bank}: {exc}", file=sys.stderr)
        sys.exit(2)
    print(table(results, args.show))


if __name__ == "__main__":
    main()
