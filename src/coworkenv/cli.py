"""The command line: one Typer app, one command per pipeline stage."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from coworkenv.commands import data, evaluate, rollout, synth, train
from coworkenv.spec import SpecError, load_spec

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Synthesize and use environments for AI coworkers.")
console = Console()


def _load(path: Path):
    try:
        return load_spec(path)
    except SpecError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None


@app.command()
def schema() -> None:
    """Print the JSON Schema of a TaskSpec."""
    from coworkenv.spec.io import spec_json_schema

    typer.echo(json.dumps(spec_json_schema(), indent=2))


@app.command()
def validate(specs: list[Path] = typer.Argument(..., help="spec files (YAML or JSON)")) -> None:
    """Validate spec files: schema, references and the static admission checks."""
    from coworkenv.verify.static import static_findings

    failed = 0
    for path in specs:
        spec = _load(path)
        findings = static_findings(spec)
        if findings:
            failed += 1
            console.print(f"[red]✗ {path}[/red]")
            for f in findings:
                console.print(f"   {f.kind} at {f.where}: {f.evidence}")
        else:
            console.print(f"[green]✓ {path}[/green] ({spec.id})")
    raise typer.Exit(1 if failed else 0)


@app.command()
def run(
    spec_path: Path = typer.Argument(..., metavar="SPEC"),
    policy: str = typer.Option("oracle", help="oracle | openai:<model>@<url> | hf:<path> | embedded"),
    seed: int = typer.Option(0),
    as_json: bool = typer.Option(False, "--json", help="print the trajectory as JSON"),
) -> None:
    """Run one episode and print a readable transcript and the grade."""
    from coworkenv.agents.factory import make_policy
    from coworkenv.runtime import Environment, run_episode
    from coworkenv.transcript import print_grade, print_transcript

    spec = _load(spec_path)
    traj = run_episode(Environment(spec, seed=seed), make_policy(policy))
    if as_json:
        typer.echo(traj.model_dump_json(indent=2))
        return
    print_transcript(console, traj)
    print_grade(console, traj)


@app.command()
def quickstart(
    examples: Path = typer.Option(Path("examples"), help="folder of example specs"),
) -> None:
    """The main job on embedded defaults: run every example with the oracle and summarise."""
    from coworkenv.pipeline import run_examples

    rows = run_examples(examples, console)
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
    if not all(r["passed"] for r in rows):
        raise typer.Exit(1)


for _stage in (synth, rollout, data, train, evaluate):
    _stage.register(app)


def main() -> None:
    app()
