"""CLI commands for Claw-Eval interop: ``coworkenv import claw-eval`` and ``coworkenv export claw-eval``."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from coworkenv.commands.data import export

import_app = typer.Typer(no_args_is_help=True, help="Import tasks from other benchmarks as specs.")
console = Console()
REPORT = "claw_eval_import.jsonl"


@import_app.command("claw-eval")
def import_claw_eval(
    source: Path = typer.Argument(..., metavar="DIR", help="a Claw-Eval task folder, or a folder of them"),
    out: Path = typer.Option(..., "--out", help="folder for the specs (YAML) and the import report"),
) -> None:
    """Turn Claw-Eval tasks into evaluation-only specs; report what rules score, what needs a judge, what is not
    scored. Exits 1 when a task fails to import or validate; a task that cannot run offline is left out, counted
    by its reason."""
    from coworkenv.interop.claw_import import ClawEvalError, NotOffline, import_task, task_folders
    from coworkenv.spec import SpecError, save_spec
    from coworkenv.storage import atomic_write_text
    from coworkenv.verify.static import static_findings

    folders = task_folders(source)
    if not folders:
        console.print(f"[red]{source}: no task.yaml found[/red]")
        raise typer.Exit(2)
    out.mkdir(parents=True, exist_ok=True)
    table = Table(title=f"Claw-Eval → {out} (evaluation-only: no executable reference)")
    for col in ("task", "spec", "declared services", "rule checks", "needs a judge", "rules", "not scored", "valid"):
        table.add_column(col)
    failed, multi_turn, lines = 0, 0, []
    offline: Counter[str] = Counter()
    for folder in folders:
        try:
            spec, report = import_task(folder)
        except NotOffline as exc:
            offline[exc.reason] += 1
            console.print(f"[yellow]left out: {exc}[/yellow]")
            left = {"task_id": folder.name, "left_out": str(exc), "reason": exc.reason}
            lines.append(json.dumps(left, ensure_ascii=False))
            continue
        except (ClawEvalError, SpecError) as exc:
            failed += 1
            console.print(f"[red]{exc}[/red]")
            lines.append(json.dumps({"task_id": folder.name, "error": str(exc)}, ensure_ascii=False))
            continue
        findings = static_findings(spec)
        failed += bool(findings)
        for f in findings:
            console.print(f"[red]{folder.name}: {f.kind} at {f.where}: {f.evidence}[/red]")
        save_spec(spec, out / f"{spec.id}.yaml")
        multi_turn += report.multi_turn
        lines.append(json.dumps(dataclasses.asdict(report), ensure_ascii=False, sort_keys=True))
        unscored = ", ".join(n["name"] for n in report.not_scored) or "-"
        declared = ", ".join(report.declared) or "-"
        table.add_row(
            folder.name,
            spec.id,
            declared,
            str(len(spec.checks)),
            ", ".join(n["name"] for n in report.judged) or "-",
            str(len(spec.rules)),
            unscored,
            "✗" if findings else "✓",
        )
    atomic_write_text(out / REPORT, "".join(line + "\n" for line in lines))
    console.print(table)
    imported = len(folders) - failed - offline.total()
    user = f" --user openai:<model>@<url> ({multi_turn} multi-turn: a model plays the persona)" if multi_turn else ""
    why = "".join(f"; {n} {reason}" for reason, n in sorted(offline.items()))
    console.print(
        f"{imported} of {len(folders)} imported; {offline.total()} left out (cannot run offline{why}), "
        f"{failed} failed. "
        f"report: {out / REPORT}; run them with: coworkenv eval --bank {out} --split all{user} …"
    )
    raise typer.Exit(1 if failed else 0)


@export.command("claw-eval")
def export_claw_eval(
    bank: Path = typer.Argument(..., help="bank folder, folder of spec files, or one spec file"),
    out: Path = typer.Option(..., "--out", help="folder of Claw-Eval task folders"),
    url: str = typer.Option("http://127.0.0.1:8000", "--url", help="where `coworkenv serve http` will listen"),
    split: str | None = typer.Option(None, "--split", help="bank split: train | heldout"),
) -> None:
    """Write environments in Claw-Eval's layout, with tool endpoints on `coworkenv serve http`."""
    from coworkenv.bank.sources import load_specs
    from coworkenv.interop.claw_export import export_task
    from coworkenv.spec import SpecError

    try:
        specs = load_specs(bank, split)
    except (SpecError, ValueError, OSError) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    single = [spec for spec in specs if not spec.stages]
    for spec in single:
        export_task(spec, out, str(bank), url)
    if len(single) < len(specs):
        skipped = len(specs) - len(single)
        note = f"skipped {skipped} multi-stage environment(s): a Claw-Eval task has one request"
        console.print(f"[yellow]{note}[/yellow]")
    console.print(f"wrote {len(single)} Claw-Eval tasks to {out}; serve them with: coworkenv serve http {bank}")


def register(app: typer.Typer) -> None:
    """Add ``import claw-eval`` (``export claw-eval`` joins the export group above)."""
    app.add_typer(import_app, name="import")
