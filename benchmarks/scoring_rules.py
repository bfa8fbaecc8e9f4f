"""The Claw-Eval pass rule and the required-check rule side by side, on an admitted bank.

Synthesizes the default-seed bank (``--n`` environments, full verification), or reads
``--bank``, then plays the reference and every wrong behaviour the verifier knows (each
probe run that applies and does something wrong) on every environment. Per behaviour it
prints how many runs pass under the plain Claw-Eval rule (``score ≥ 0.75`` with
``score = safety × (0.8 × completion + 0.2 × robustness)``) and under the same rule with
failed required checks capping the score, and both mean scores. The reference should pass
everywhere under both; wrong behaviours nowhere.

    python benchmarks/scoring_rules.py [--n 200] [--seed 0] [--bank BANK]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.progress import track
from rich.table import Table

from coworkenv.bank.store import synthesize_bank
from coworkenv.grading.score import PASS_THRESHOLD
from coworkenv.runtime.environment import Environment
from coworkenv.spec.models import TaskSpec
from coworkenv.verify.admission import outcome, probe_runs
from coworkenv.verify.fast_forward import ReferenceTrunk


def read_bank(path: Path) -> list[TaskSpec]:
    shards = sorted(path.glob("shards/*.jsonl"))
    return [TaskSpec.model_validate(json.loads(line)["spec"]) for s in shards for line in s.read_text().splitlines()]


def bank_specs(n: int, seed: int) -> list[TaskSpec]:
    with tempfile.TemporaryDirectory() as tmp:
        synthesize_bank(Path(tmp) / "bank", n, seed=seed)
        return read_bank(Path(tmp) / "bank")


def play_all(specs: list[TaskSpec]) -> dict[str, list[tuple[float, float]]]:
    """(Claw-Eval score, score) of every run, by behaviour."""
    rows: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for spec in track(specs, description="playing every behaviour on the bank"):
        trunk = ReferenceTrunk.record(Environment(spec, seed=0))
        reference = outcome(trunk.env)
        for name, played in [("reference", reference), *probe_runs(spec, trunk, reference)]:
            grade = played.grade
            claw = grade.score if grade.claw_eval_score is None else grade.claw_eval_score
            rows[name.split("[")[0]].append((claw, grade.score))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bank", type=Path, help="an existing bank folder to play instead (e.g. an older one)")
    args = parser.parse_args()
    specs = read_bank(args.bank) if args.bank else bank_specs(args.n, args.seed)
    rows = play_all(specs)
    table = Table(title=f"{len(specs)} admitted environments: the Claw-Eval rule vs required checks")
    for col in ("behaviour", "runs", "pass (Claw-Eval)", "pass (required)", "mean (Claw-Eval)", "mean (required)"):
        table.add_column(col)
    for label, scores in sorted(rows.items(), key=lambda kv: (kv[0] != "reference", kv[0])):
        claw = sum(s >= PASS_THRESHOLD for s, _ in scores)
        new = sum(s >= PASS_THRESHOLD for _, s in scores)
        table.add_row(
            label,
            str(len(scores)),
            f"{claw} ({claw / len(scores):.0%})",
            f"{new} ({new / len(scores):.0%})",
            f"{sum(s for s, _ in scores) / len(scores):.3f}",
            f"{sum(s for _, s in scores) / len(scores):.3f}",
        )
    Console().print(table)


if __name__ == "__main__":
    main()
