"""CLI commands for the synth stage: ``coworkenv synth`` and ``coworkenv bank stats``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from rich.progress import ProgressColumn

    from coworkenv.bank.llm.client import LLMClient


def _names(values: list[str] | None) -> list[str]:
    """Repeated options and comma-separated lists, both accepted."""
    return [v.strip() for item in values or [] for v in item.split(",") if v.strip()]


def _table(title: str, columns: tuple[str, ...], rows: Sequence[tuple[object, ...]]) -> Table:
    table = Table(title=title)
    for col in columns:
        table.add_column(col, justify="right" if col not in columns[:1] else "left")
    for row in rows:
        table.add_row(*(str(v) for v in row))
    return table


def print_manifest(console: Console, m: dict[str, Any]) -> None:
    """The bank manifest as tables: summary, rejection reasons, capabilities, modifiers, interfaces, blueprints,
    shards."""
    cfg = m["config"]
    summary = [
        ("environments", m["admitted"]),
        ("jobs", m["jobs"]),
        ("rejected", m["rejected"]),
        ("yield", f"{m['yield']:.1%}"),
        ("repaired", m["repaired"]),
        ("multi-turn", m["multi_turn"]),
        ("train / held-out", f"{m['split']['train']} / {m['split']['heldout']}"),
        ("seed", cfg["seed"]),
        ("complete", "yes" if m["complete"] else "no (resume with the same command)"),
    ]
    console.print(_table("bank", ("", "value"), summary))
    console.print(_table("repair rounds (admitted)", ("rounds", "environments"), list(m["repair_rounds"].items())))
    reasons = [(k, v, m["final_rejections"].get(k, 0)) for k, v in m["rejection_reasons"].items()]
    console.print(_table("rejection reasons", ("finding", "in any round", "final"), reasons))
    console.print(_table("capabilities", ("capability", "environments"), list(m["per_capability"].items())))
    console.print(_table("modifiers", ("modifier", "environments"), list(m["per_modifier"].items())))
    interfaces = list(m.get("per_interface", {}).items())  # a bank made before interfaces has none
    console.print(_table("tool interfaces", ("naming family", "environments"), interfaces))
    rows = [
        (bp, d["split"], d["jobs"], d["admitted"], f"{d['admitted'] / d['jobs']:.0%}" if d["jobs"] else "-")
        for bp, d in m["per_blueprint"].items()
    ]
    console.print(_table("blueprints", ("blueprint", "split", "jobs", "admitted", "yield"), rows))
    console.print(_table("shards", ("shard", "environments"), list(m["shards"].items())))
    if "llm" in m:
        print_llm(console, m["llm"])


def print_llm(console: Console, llm: dict[str, Any]) -> None:
    """The LLM generator's figures: yield by round, cost per admitted environment, coverage."""
    summary = [
        ("LLM jobs / admitted", f"{llm['jobs']} / {llm['admitted']}"),
        ("admitted after a repair round", f"{llm['repair_share']:.1%}"),
        ("admitted by a programmatic repair", f"{llm['programmatic_share']:.1%}"),
        ("near-duplicates rejected", llm["near_duplicates"]),
        ("requests per admitted", llm["requests_per_admitted"]),
        ("tokens per admitted", llm["tokens_per_admitted"]),
        (
            "requests / prompt tokens / completion tokens",
            f"{llm['requests']} / {llm['prompt_tokens']} / {llm['completion_tokens']}",
        ),
    ]
    console.print(_table("LLM generator", ("", "value"), summary))
    rows = [(r, llm["admitted_in_round"][r], f"{y:.1%}") for r, y in llm["yield_by_round"].items()]
    console.print(_table("LLM yield by round", ("round", "admitted in it", "cumulative yield"), rows))
    cover = [(c, d["targeted"], d["admitted"]) for c, d in llm["capability_coverage"].items()]
    console.print(_table("capability coverage (LLM)", ("capability", "targeted", "admitted"), cover))


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the main app."""
    app.command("synth")(synth)
    bank_app = typer.Typer(help="Inspect environment banks.", no_args_is_help=True)
    bank_app.command("stats")(stats)
    app.add_typer(bank_app, name="bank")


def synth(
    n: int = typer.Option(..., "--n", min=1, help="admitted environments wanted"),
    out: Path = typer.Option(..., "--out", help="bank folder (resumed if it exists)"),
    seed: int = typer.Option(0, "--seed"),
    capabilities: list[str] | None = typer.Option(None, "--capabilities", help="only environments exercising them"),
    blueprints: list[str] | None = typer.Option(None, "--blueprints", help="only these workflows"),
    held_out: list[str] | None = typer.Option(None, "--held-out", help="held-out blueprints (default: built-in)"),
    generator: str = typer.Option(
        "blueprints", "--generator", help="where workflows come from: blueprints, composed (typed step chains) or mix"
    ),
    workspace: str = typer.Option(
        "realistic", "--workspace", help="workspace size: realistic (background records) or small (the task's alone)"
    ),
    interfaces: str = typer.Option(
        "train",
        "--interfaces",
        help="tool interfaces drawn per environment: train (the training families), held_out (a family training "
        "banks never draw; the bank is held out) or canonical (tools as their services name them)",
    ),
    workers: int | None = typer.Option(
        None, "--workers", "-w", min=1, help="worker processes (default 1; with --ray: actors, default cluster CPUs)"
    ),
    ray: str | None = typer.Option(None, "--ray", help="run the jobs on Ray: local, auto or a cluster's HOST:PORT"),
    max_rounds: int = typer.Option(3, "--max-rounds", "--rounds", min=0, help="repair rounds per environment"),
    llm: str | None = typer.Option(None, "--llm", help="generator model: openai:<model>@<base_url>"),
    llm_share: float = typer.Option(1.0, "--llm-share", min=0.0, max=1.0, help="share of jobs the model writes"),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="requests in flight (--llm; up to 32)"),
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", help="variable holding the API key"),
) -> None:
    """Synthesize, verify and repair environments into a bank (resumable)."""
    from rich.markup import escape
    from rich.progress import Progress

    from coworkenv.bank.runners import JobFailed, WorkerLost
    from coworkenv.bank.store import BankError, read_builds, synthesize_bank
    from coworkenv.cluster import ClusterError

    console = Console()
    client = _generator(console, llm, api_key_env) if llm else None
    caps = _known_capabilities(console, _names(capabilities))
    with Progress(*_columns(), console=console) as progress:
        task = progress.add_task("synth", total=n, jobs=0)
        try:
            manifest = synthesize_bank(
                out,
                n,
                seed=seed,
                capabilities=caps,
                blueprints=_names(blueprints),
                held_out=_names(held_out) if held_out else None,
                generator=generator,
                interfaces=interfaces,
                workers=concurrency if client else (workers or (0 if ray else 1)),
                workspace=workspace,
                max_rounds=max_rounds,
                on_progress=lambda admitted, jobs: progress.update(task, completed=admitted, jobs=jobs),
                llm=client,
                llm_share=llm_share,
                ray_address=ray,
            )
        except (BankError, ValueError, ClusterError) as exc:
            console.print(f"[red]{escape(str(exc))}[/red]")
            raise typer.Exit(2) from None
        except (JobFailed, WorkerLost) as exc:
            console.print(
                f"[red]{escape(str(exc))}; what finished before it is kept (resume with the same command)[/red]"
            )
            raise typer.Exit(1) from None
        except RuntimeError as exc:  # the model's endpoint is dead or refuses us, or the model never passes
            console.print(f"[red]LLM synthesis stopped (resume with the same command): {exc}[/red]")
            raise typer.Exit(1) from None
    console.print(
        f"{manifest['admitted']} environments in {out} (yield {manifest['yield']:.1%}, {manifest['repaired']} repaired)"
    )
    builds = read_builds(out)
    if not client and builds:
        console.print(build_line(builds[-1]))


def build_line(build: dict[str, object]) -> str:
    """One run's scaling: where it ran, its start-up, and its rates overall, after start-up, per worker and per
    CPU-second of the workers (where known)."""
    per_cpu = f", {build['per_cpu_second']:.1f} per worker CPU-second" if build.get("per_cpu_second") else ""
    return (
        f"{build['jobs']} jobs on {build['workers']} {build['backend']} worker(s) in {build['seconds']:.1f} s "
        f"(start-up {build['startup_seconds']:.1f} s): {build['rate']:.1f} admitted/s, marginal "
        f"{build['marginal_rate']:.1f}/s, {build['per_worker_rate']:.1f}/s per worker{per_cpu}"
    )


def _generator(console: Console, llm: str, api_key_env: str) -> LLMClient:
    """The LLM client, once the few-shot pool and the SDK are known to be there (exit 2 if not)."""
    try:
        from coworkenv.bank.llm.client import LLMClient
        from coworkenv.bank.llm.prompts import pick_example

        pick_example(())  # the few-shot pool must be there before any request is paid for
        return LLMClient(llm, api_key_env=api_key_env)
    except FileNotFoundError as exc:
        console.print(f"[red]--llm: {exc} (this install of coworkenv lacks its package data: reinstall it)[/red]")
        raise typer.Exit(2) from None
    except ImportError:
        console.print("[red]--llm needs the openai SDK: pip install 'coworkenv\\[openai]'[/red]")
        raise typer.Exit(2) from None
    except ValueError as exc:
        console.print(f"[red]--llm: {exc}[/red]")
        raise typer.Exit(2) from None


def _known_capabilities(console: Console, caps: list[str]) -> list[str]:
    """The --capabilities asked for; an unknown name exits 2, listing the known ones."""
    from coworkenv.capabilities import CAPABILITIES

    unknown = sorted(set(caps) - set(CAPABILITIES))
    if unknown:
        console.print(f"[red]unknown capabilities: {', '.join(unknown)}; known: {', '.join(CAPABILITIES)}[/red]")
        raise typer.Exit(2)
    return caps


def _columns() -> tuple[ProgressColumn, ...]:
    """The synth bar: admitted of wanted, and how many jobs it has taken so far."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    return (
        TextColumn("[bold]synth"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[jobs]} jobs"),
        TimeElapsedColumn(),
    )


def stats(
    bank: Path = typer.Argument(..., help="bank folder"),
    min_envs: int = typer.Option(20, "--min-envs", min=1, help="flag tools fewer environments than this call"),
) -> None:
    """Print a bank's manifest, its build runs and its workflow diversity as tables."""
    from rich.markup import escape

    from coworkenv.bank.diversity import measure
    from coworkenv.bank.store import BankError, read_builds, read_manifest

    console = Console()
    try:
        manifest, runs = read_manifest(bank), read_builds(bank)
        tallies = measure(bank)
    except (BankError, OSError, ValueError) as exc:
        console.print(f"[red]{escape(f'{bank}: {exc}')}[/red]")
        raise typer.Exit(2) from None
    print_manifest(console, manifest)
    if runs:
        columns = ("backend", "workers", "jobs", "admitted", "start-up s", "/s", "marginal/s", "/CPU-s")
        console.print(_table("builds", columns, [_build_row(b) for b in runs]))
    for name, tally in tallies.items():
        console.print(_table(f"diversity: {name}", ("figure", "value"), list(tally.rows(min_envs))))


def _build_row(build: dict[str, object]) -> tuple[object, ...]:
    rates = ("startup_seconds", "rate", "marginal_rate", "per_cpu_second")
    figures = ("-" if build.get(k) is None else f"{build[k]:.1f}" for k in rates)
    return (build["backend"], build["workers"], build["jobs"], build["admitted"], *figures)
