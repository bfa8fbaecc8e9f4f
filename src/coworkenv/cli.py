"""The command line: one Typer app, one command per pipeline stage."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from coworkenv.commands import claw_eval, data, evaluate, rollout, serve, specs, synth, train

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Synthesize and use environments for AI coworkers.")
console = Console()


def _version(value: bool) -> None:
    if value:
        from coworkenv import __version__

        typer.echo(f"coworkenv {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="print the version"),
) -> None:
    """Synthesize and use environments for AI coworkers."""


@app.command()
def schema() -> None:
    """Print the JSON Schema of a TaskSpec."""
    from coworkenv.spec.io import spec_json_schema

    typer.echo(json.dumps(spec_json_schema(), indent=2))


@app.command()
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
    stages.add_row("oracle rollouts", json.dumps(summary["oracle"], sort_keys=True))
    stages.add_row("SFT dataset", f"{summary['sft']['examples']} conversations → {summary['sft']['path']}")
    if "rl" in summary:
        stages.add_row("student rollouts", json.dumps(summary["student"], sort_keys=True))
        stages.add_row("RL records", f"{summary['rl']['records']} turns of {summary['rl']['episodes']} episodes")
    console.print(stages)
    if not all(r["passed"] for r in rows):
        raise typer.Exit(1)


for _stage in (specs, synth, rollout, data, train, evaluate, serve, claw_eval):
    _stage.register(app)


def main() -> None:
    app()
