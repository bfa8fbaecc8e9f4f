"""CLI commands for the evaluate stage: ``coworkenv eval`` and ``coworkenv report``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

MODEL_HELP = "tiny | embedded | <checkpoint folder> | hf:<path> | oracle | openai:<model>@<url>"


TOOLS_HELP = "tools each prompt offers: all | spec (those the spec names) | spec+N (plus N distractors)"


def metrics_table(title: str, metrics: dict) -> Table:
    """The headline numbers and per-capability rows of one evaluation."""
    table = Table(title=title)
    for col in ("subset", "tasks", "score", "pass@1", "pass@k", "pass^k"):
        table.add_column(col, justify="right" if col != "subset" else "left")
    rows = [("all", metrics["overall"]), ("multi-turn", metrics["multi_turn"])]
    rows += [(f"  {cap}", m) for cap, m in metrics["by_capability"].items()]
    for name, m in rows:
        table.add_row(name, str(m["tasks"]), *(f"{m[c]:.1f}" for c in ("score", "pass@1", "pass@k", "pass^k")))
    return table


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the main app."""

    @app.command("eval")
    def eval_cmd(
        model: str = typer.Option(..., "--model", help=MODEL_HELP),
        bank: Path = typer.Option(..., "--bank", help="bank folder (or a folder of spec files without --split)"),
        split: str | None = typer.Option("heldout", "--split", help="train | heldout; 'all' for every spec"),
        samples: int = typer.Option(1, "--samples", "-k", min=1, help="episodes per environment (K)"),
        out: Path = typer.Option(..., "--out", help="run folder for metrics.json, trajectories and report.html"),
        label: str | None = typer.Option(None, "--label", help="name in reports (default: the model)"),
        temperature: float | None = typer.Option(None, help="sampling temperature (default 0 for K=1, else 0.8)"),
        max_new_tokens: int = typer.Option(256, "--max-new-tokens", min=1),
        batch_size: int = typer.Option(16, "--batch-size", min=1, help="episodes played in lockstep"),
        device: str = typer.Option("auto", help="auto | cpu | cuda"),
        dtype: str | None = typer.Option(None, help="weights' dtype for local models, e.g. bfloat16"),
        tools: str = typer.Option("all", "--tools", help=TOOLS_HELP),
        seed: int = typer.Option(0),
    ) -> None:
        """Evaluate a model on a bank split: score x100, pass@1, pass@k, pass^k, per capability and blueprint."""
        from coworkenv.agents.tool_menu import narrow_tools
        from coworkenv.eval.report import write_report
        from coworkenv.eval.runner import default_temperature, evaluate, make_eval_policy, save_eval
        from coworkenv.rollout.sources import load_specs

        console = Console()
        try:
            specs = [narrow_tools(s, tools) for s in load_specs(bank, None if split in (None, "all") else split)]
        except ValueError as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(2) from None
        if not specs:
            console.print(f"[red]no environments in {bank} for split {split!r}[/red]")
            raise typer.Exit(2)
        temp = default_temperature(samples) if temperature is None else temperature
        policy = make_eval_policy(model, device=device, dtype=dtype, temperature=temp,
                                  max_new_tokens=max_new_tokens, seed=seed)
        with Progress(console=console) as bar:
            task = bar.add_task(f"eval {model}", total=len(specs) * samples)
            result = evaluate(policy, specs, samples=samples, seed=seed, batch_size=batch_size,
                              progress=lambda n: bar.advance(task, n))
        save_eval(result, out, label or model, model=model, split=split, samples=samples, bank=str(bank),
                  temperature=temp)
        console.print(metrics_table(f"{label or model} on {bank} ({split})", result.metrics))
        console.print(f"report: {write_report(out)}")

    @app.command("report")
    def report_cmd(
        run: Path = typer.Argument(..., help="run folder with evaluations and/or trainings"),
        title: str | None = typer.Option(None, help="page title"),
    ) -> None:
        """Re-render a run folder's HTML report (tables and plots) from its files."""
        from coworkenv.eval.report import write_report

        if not run.is_dir():
            Console().print(f"[red]{run} is not a folder[/red]")
            raise typer.Exit(2)
        typer.echo(str(write_report(run, title)))
