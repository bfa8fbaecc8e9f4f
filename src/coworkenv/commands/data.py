"""CLI commands for the data stage: ``coworkenv export sft`` and ``coworkenv export rl``.

Both refuse input that would silently give an empty or mixed dataset: a run folder without
episodes, or an output folder already holding a dataset (``--overwrite`` replaces it whole,
so no file of an earlier export is left behind).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from coworkenv.data.tool_arguments import FORMATS, checked_format

export = typer.Typer(no_args_is_help=True, help="Turn rollouts into training data (SFT demos, RL records).")
console = Console()

RUNS = typer.Argument(..., help="rollout folders (from `coworkenv rollout`)")
BANK = typer.Option(None, "--bank", help="bank whose held-out blueprints are excluded")
EXCLUDE = typer.Option([], "--exclude-blueprint", help="further blueprints to exclude (repeatable)")
OVERWRITE = typer.Option(False, "--overwrite", help="replace a dataset already in --out")
ARGUMENTS = typer.Option(
    "text", "--arguments", help="tool-call arguments as JSON 'text' (OpenAI) or 'object' (tojson chat templates)"
)
DATASET_FILES = ("sft.jsonl", "sources.jsonl", "rl.jsonl", "manifest.json")


def _fail(message: str) -> None:
    console.print(f"[red]{escape(message)}[/red]")
    raise typer.Exit(2)


def _warn_evaluation_only(skipped: int) -> None:
    """Say so when episodes of evaluation-only (imported) environments were left out of a training export."""
    if skipped:
        console.print(
            f"[yellow]skipped {skipped} episode(s) of evaluation-only environments (imported tasks, graded by "
            "their source's rubric): they are for `coworkenv eval`, never for training data[/yellow]"
        )


def check_inputs(runs: list[Path], out: Path, overwrite: bool, arguments: str) -> None:
    """Exit 2 unless every run folder holds episodes and ``out`` may be written; clear it when overwriting."""
    from coworkenv.rollout.store import EPISODES_FILE

    if arguments not in FORMATS:
        _fail(f"unknown --arguments {arguments!r}; expected one of: {', '.join(FORMATS)}")
    for run in runs:
        if not (run / EPISODES_FILE).is_file():
            _fail(f"{run} is not a rollout folder (no {EPISODES_FILE}); make one with `coworkenv rollout`")
    existing = [out / name for name in DATASET_FILES if (out / name).exists()]
    if existing and not overwrite:
        _fail(f"{out} already holds a dataset ({', '.join(p.name for p in existing)}); pass --overwrite to replace it")
    for path in existing:
        path.unlink()


@contextmanager
def unreadable_runs_exit() -> Iterator[None]:
    """Exit 2 naming the file, line and field when a run holds a line that is not an episode record."""
    from coworkenv.rollout.store import StoreFormatError

    try:
        yield
    except StoreFormatError as exc:
        _fail(str(exc))


@export.command("sft")
def sft(
    runs: list[Path] = RUNS,
    out: Path = typer.Option(..., "--out", help="dataset folder"),
    bank: Path | None = BANK,
    min_score: float = typer.Option(1.0, "--min-score", help="keep episodes scoring at least this"),
    dedupe: bool = typer.Option(True, "--dedupe/--no-dedupe", help="drop identical conversations"),
    max_per_capability: int | None = typer.Option(None, "--max-per-capability", min=1),
    max_per_blueprint: int | None = typer.Option(None, "--max-per-blueprint", min=1),
    exclude_blueprint: list[str] = EXCLUDE,
    arguments: str = ARGUMENTS,
    overwrite: bool = OVERWRITE,
) -> None:
    """Curate teacher trajectories into an SFT dataset (TRL conversational format with tools)."""
    from coworkenv.data.sft import SftSettings, export_sft

    check_inputs(runs, out, overwrite, arguments)
    settings = SftSettings(min_score, dedupe, max_per_capability, max_per_blueprint, list(exclude_blueprint))
    settings.arguments = checked_format(arguments)  # check_inputs has already refused any other
    with console.status("curating demonstrations"), unreadable_runs_exit():
        summary = export_sft(list(runs), out, settings, bank=bank)
    _warn_evaluation_only(summary.evaluation_only)
    table = Table(title=f"SFT dataset: {summary.examples} demonstrations in {out}")
    table.add_column("stage")
    table.add_column("episodes", justify="right")
    for stage, n in summary.funnel.items():
        table.add_row(stage, str(n))
    console.print(table)


@export.command("rl")
def rl(
    runs: list[Path] = RUNS,
    out: Path = typer.Option(..., "--out", help="dataset folder"),
    bank: Path | None = BANK,
    reward: str = typer.Option("raw", "--reward", help="raw | binary | safety_gated"),
    normaliser: str = typer.Option("grpo", "--normaliser", help="none | grpo | rloo"),
    credit: str = typer.Option("broadcast", "--credit", help="broadcast | discounted | checks"),
    gamma: float = typer.Option(1.0, "--gamma", min=0.0, max=1.0, help="discount per turn"),
    violation_penalty: float = typer.Option(1.0, "--violation-penalty", help="λ for check-attributed credit"),
    exclude_blueprint: list[str] = EXCLUDE,
    arguments: str = ARGUMENTS,
    overwrite: bool = OVERWRITE,
) -> None:
    """Per-turn RL records with reward, return and advantage under the chosen schemes."""
    from coworkenv.data.rl import RlSettings, checked_schemes, export_rl

    try:
        settings = RlSettings(
            *checked_schemes(reward, normaliser, credit),
            gamma,
            violation_penalty,
            exclude_blueprints=list(exclude_blueprint),
            arguments=checked_format(arguments),
        )
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    check_inputs(runs, out, overwrite, arguments)
    with console.status("computing rewards and advantages"), unreadable_runs_exit():
        summary = export_rl(list(runs), out, settings, bank=bank)
    _warn_evaluation_only(summary.evaluation_only)
    console.print(
        f"{summary.records} turn records from {summary.episodes} episodes in {summary.groups} groups -> {out}/rl.jsonl "
        f"(reward={reward}, normaliser={normaliser}, credit={credit}, gamma={gamma}); "
        f"mean advantage {summary.stats['mean_advantage']}, std {summary.stats['std_advantage']}"
    )


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the main app."""
    app.add_typer(export, name="export")
