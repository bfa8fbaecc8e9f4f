"""End-to-end jobs on the embedded defaults, used by ``coworkenv quickstart``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from coworkenv.agents.oracle import OracleTeacher
from coworkenv.bank.diversity import measure
from coworkenv.bank.sources import load_specs
from coworkenv.bank.store import synthesize_bank
from coworkenv.data.rl import export_rl
from coworkenv.data.sft import export_sft
from coworkenv.rollout.runner import rollout_bank
from coworkenv.rollout.worker import RunOptions
from coworkenv.runtime import Environment, run_episode
from coworkenv.spec import SpecError, load_spec
from coworkenv.spec.io import SPEC_SUFFIXES

# The student samples (temperature 1) so the K episodes of a group differ; short turns and
# episodes keep a CPU run of the embedded model to minutes.
STUDENT_OPTIONS = {"temperature": 1.0, "max_new_tokens": 96}
STUDENT_MAX_TURNS = 8


def spec_files(folder: Path) -> list[Path]:
    """The spec files directly inside ``folder``, in a stable order."""
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in SPEC_SUFFIXES)


def run_examples(folder: Path, console: Console) -> list[dict[str, object]]:
    """Run the oracle once on every spec in ``folder``; one summary row per spec.

    A spec that does not load becomes a failed row (and the error is printed) rather than
    stopping the run, so one broken file does not hide the state of the others.
    """
    if not folder.is_dir():
        console.print(f"[red]{folder} is not a folder[/red]")
        return []
    paths = spec_files(folder)
    if not paths:
        console.print(f"[yellow]no spec files in {folder}[/yellow]")
    rows: list[dict[str, object]] = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("oracle on examples", total=len(paths))
        teacher = OracleTeacher()
        for path in paths:
            progress.update(task, description=path.stem)
            try:
                spec = load_spec(path)
            except SpecError as exc:
                console.print(f"[red]{exc}[/red]")
                rows.append(
                    {
                        "id": path.stem,
                        "capabilities": [],
                        "turns": 0,
                        "calls": 0,
                        "score": 0.0,
                        "passed": False,
                        "error": str(exc),
                    }
                )
                progress.advance(task)
                continue
            traj = run_episode(Environment(spec), teacher)
            grade = traj.grade
            rows.append(
                {
                    "id": spec.id,
                    "capabilities": list(spec.capabilities),
                    "turns": len(traj.steps),
                    "calls": len(traj.calls),
                    "score": grade.score if grade else 0.0,
                    "passed": bool(grade and grade.passed),
                }
            )
            progress.advance(task)
    return rows


def main_job(
    out: Path,
    console: Console,
    *,
    examples: Path = Path("examples"),
    n: int = 300,
    seed: int = 0,
    workers: int = 1,
    student: str | None = None,
    student_envs: int = 4,
    samples: int = 4,
) -> dict[str, Any]:
    """The pipeline end to end on the embedded defaults; every stage resumes from ``out``.

    examples with the oracle → synthesize and verify ``n`` environments (blueprints and composed
    workflows) → oracle rollouts on the training split → SFT dataset; with ``student`` (a policy spec
    such as ``embedded``), also ``samples`` student episodes on ``student_envs`` training environments → RL records.
    """
    summary: dict[str, Any] = {"examples": run_examples(examples, console)}
    bank = out / "bank"
    columns = (TextColumn("[bold]synth"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("synth", total=n)
        manifest = synthesize_bank(
            bank,
            n,
            seed=seed,
            generator="mix",
            workers=workers,
            on_progress=lambda admitted, _: progress.update(task, completed=admitted),
        )
    summary["bank"] = {k: manifest[k] for k in ("admitted", "jobs", "rejected", "yield", "repaired", "split")}
    tally = measure(bank).get("all")
    summary["bank"]["diversity"] = tally.headline() if tally is not None else "no environments admitted"
    oracle = rollout_bank(
        bank, "oracle", 1, out / "runs" / "oracle", workers=workers, seed=seed, split="train", console=console
    )
    summary["oracle"] = oracle.counts
    sft = export_sft(out / "runs" / "oracle", out / "sft", bank=bank)
    summary["sft"] = {"examples": sft.examples, "funnel": sft.funnel, "path": str(sft.out)}
    if student:
        specs = load_specs(bank, "train")[:student_envs]
        run = rollout_bank(
            specs,
            student,
            samples,
            out / "runs" / "student",
            seed=seed,
            options=RunOptions(timeout=None, max_turns=STUDENT_MAX_TURNS),
            policy_options=STUDENT_OPTIONS,
            console=console,
        )
        summary["student"] = run.counts
        rl = export_rl(out / "runs" / "student", out / "rl", bank=bank)
        summary["rl"] = {"records": rl.records, "episodes": rl.episodes, "path": str(rl.out)}
    return summary
