"""CLI command for the main job: ``coworkenv quickstart`` (examples, bank, oracle rollouts, SFT data)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

console = Console()


def episode_counts(counts: dict[str, Any]) -> str:
    """A rollout's headline counts as a sentence: episodes, passes, mean score and how they ended."""
    mean = counts["mean_score"]
    ended = ", ".join(f"{n} {status}" for status, n in counts["by_status"].items())
    score = "no score" if mean is None else f"mean score {mean:.3f}"
    return f"{counts['episodes']} episodes, {counts['passed']} passed, {score} (ended: {ended or 'none'})"


def quickstart(
    out: Path = typer.Option(Path("out"), help="output folder; every stage resumes from it"),
    examples: Path = typer.Option(Path("examples"), help="folder of hand-written example specs"),
    n: int = typer.Option(300, "--n", min=1, help="environments to synthesize and verify"),
    seed: int = typer.Option(0),
    workers: int = typer.Option(1, "--workers", "-w", min=1),
    student: str | None = typer.Option(None, help="also roll out a student (e.g. 'embedded') and write RL records"),
    student_envs: int = typer.Option(4, min=1, help="training environments the student plays"),
    samples: int = typer.Option(4, min=1, help="student episodes per environment (K)"),
) -> None:
    """The main job: examples with the oracle, a verified bank, oracle rollouts, the SFT dataset."""
    from coworkenv.pipeline import main_job

    summary = main_job(
        out,
        console,
        examples=examples,
        n=n,
        seed=seed,
        workers=workers,
        student=student,
        student_envs=student_envs,
        samples=samples,
    )
    rows = summary["examples"]
    table = Table(title="oracle on the example environments")
    for col in ("spec", "capabilities", "turns", "calls", "score", "pass"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["id"],
            ", ".join(r["capabilities"]),
            str(r["turns"]),
            str(r["calls"]),
            f"{r['score']:.2f}",
            "✓" if r["passed"] else "✗",
        )
    console.print(table)
    stages = Table(title=f"pipeline outputs in {out}")
    stages.add_column("stage")
    stages.add_column("result")
    bank = summary["bank"]
    stages.add_row(
        "bank",
        f"{bank['admitted']} admitted of {bank['jobs']} jobs (yield {bank['yield']:.1%}, "
        f"{bank['repaired']} repaired); train {bank['split']['train']} / held-out {bank['split']['heldout']}",
    )
    stages.add_row("bank diversity", bank["diversity"])
    stages.add_row("oracle rollouts", episode_counts(summary["oracle"]))
    stages.add_row("SFT dataset", f"{summary['sft']['examples']} conversations → {summary['sft']['path']}")
    if "rl" in summary:
        stages.add_row("student rollouts", episode_counts(summary["student"]))
        stages.add_row("RL records", f"{summary['rl']['records']} turns of {summary['rl']['episodes']} episodes")
    console.print(stages)
    if not all(r["passed"] for r in rows):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add the main job to the main app."""
    app.command()(quickstart)
