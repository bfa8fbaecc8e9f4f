"""CLI commands for the evaluate stage: ``coworkenv eval`` and ``coworkenv report``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from coworkenv.commands.failures import MAX_ERROR_RATE, check_error_rate
from coworkenv.rollout.policies import POLICY_SPECS

if TYPE_CHECKING:
    from coworkenv.eval.metrics import Metrics
    from coworkenv.eval.runner import EvalResult
    from coworkenv.interop.claw_judge import Judge
    from coworkenv.runtime.policy import BatchPolicy, Policy, TaskPolicy
    from coworkenv.spec.models import TaskSpec

TOOLS_HELP = "tools each prompt offers: all | spec (those the spec names) | spec+N (plus N distractors)"
USER_HELP = "user simulator: scripted | openai:<model>@<url> (needed by personas, e.g. Claw-Eval's multi-turn tasks)"


def metrics_table(title: str, metrics: Metrics) -> Table:
    """The headline numbers and per-capability rows of one evaluation."""
    table = Table(title=title)
    for col in ("subset", "tasks", "score", "pass@1", "pass@k", "pass^k"):
        table.add_column(col, justify="right" if col != "subset" else "left")
    rows = [("all", metrics["overall"]), ("multi-turn", metrics["multi_turn"])]
    rows += [(f"  {cap}", m) for cap, m in metrics["by_capability"].items()]
    for name, m in rows:
        table.add_row(name, str(m["tasks"]), *(f"{m[c]:.1f}" for c in ("score", "pass@1", "pass@k", "pass^k")))
    return table


def short(label: str, width: int = 28) -> str:
    """A progress-bar label that leaves the bar room at 80 columns."""
    return label if len(label) <= width else label[: width - 1] + "…"


REPORT_EXTRA = "pip install 'coworkenv\\[report]'"
"""How to get the report's plotting library (matplotlib), which the core install lacks; escaped for Rich."""


def _print_report(console: Console, out: Path) -> None:
    """Render the HTML report; without the plotting library the run's metrics stand alone."""
    from coworkenv.eval.report import write_report

    try:
        console.print(f"report: {write_report(out)}")
    except ImportError as exc:
        console.print(f"[yellow]no report.html ({exc.name} is not installed: {REPORT_EXTRA})[/yellow]")


@contextmanager
def remote_errors(console: Console, url: str | None) -> Iterator[None]:
    """A server that cannot be reached or refuses a session ends the command with exit 2 and why."""
    from coworkenv.interop.client import RemoteError

    try:
        yield
    except (OSError, RemoteError) as exc:
        if url is None:
            raise
        console.print(f"[red]--env-server {escape(url)}: {escape(str(exc))}[/red]")
        raise typer.Exit(2) from None


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the main app."""
    app.command("eval")(eval_cmd)
    app.command("report")(report_cmd)


def eval_cmd(
    model: str = typer.Option(..., "--model", help=POLICY_SPECS),
    bank: Path = typer.Option(..., "--bank", help="bank folder (or a folder of spec files without --split)"),
    split: str | None = typer.Option("heldout", "--split", help="train | heldout; 'all' for every spec"),
    samples: int = typer.Option(
        1, "--samples", "--trials", "-k", min=1, help="episodes per environment (K); pass^K: all K pass"
    ),
    out: Path = typer.Option(..., "--out", help="run folder for metrics.json, trajectories and report.html"),
    label: str | None = typer.Option(None, "--label", help="name in reports (default: the model)"),
    judge: str | None = typer.Option(
        None, "--judge", help="openai:<model>@<url> scoring imported Claw-Eval tasks' LLM-judge components"
    ),
    judge_retries: int = typer.Option(4, "--judge-retries", min=0, help="retries of a failing judge request"),
    user: str | None = typer.Option(None, "--user", help=USER_HELP),
    temperature: float | None = typer.Option(None, help="sampling temperature (default 0 for K=1, else 0.8)"),
    max_new_tokens: int = typer.Option(256, "--max-new-tokens", min=1),
    batch_size: int = typer.Option(16, "--batch-size", min=1, help="episodes played in lockstep"),
    device: str = typer.Option("auto", help="auto | cpu | cuda"),
    dtype: str | None = typer.Option(None, help="weights' dtype for local models, e.g. bfloat16"),
    tools: str = typer.Option("all", "--tools", help=TOOLS_HELP),
    seed: int = typer.Option(0),
    concurrency: int | None = typer.Option(
        None, "--concurrency", min=1, help="requests in flight to an openai: endpoint (default 1)"
    ),
    max_error_rate: float = MAX_ERROR_RATE,
    env_server: str | None = typer.Option(None, "--env-server", help="play episodes on `coworkenv serve http` at URL"),
    env_token: str | None = typer.Option(
        None, "--env-token", envvar="COWORKENV_TOKEN", help="the server's token (default: $COWORKENV_TOKEN)"
    ),
) -> None:
    """Evaluate a model on a bank split: score x100, pass@1, pass@k, pass^k, per capability and blueprint."""
    from coworkenv.eval.runner import default_temperature, make_eval_policy

    console = Console()
    specs = _eval_specs(console, model, bank, split, tools, user, env_server)
    claw = _claw_scoring(console, bank, judge, judge_retries, out)
    temp = default_temperature(samples) if temperature is None else temperature
    policy = make_eval_policy(
        model,
        device=device,
        dtype=dtype,
        temperature=temp,
        max_new_tokens=max_new_tokens,
        seed=seed,
        concurrency=concurrency,
    )
    result = _play(console, policy, model, specs, samples, seed, batch_size, env_server, env_token, user)
    if claw is not None:
        _claw_rescore(console, result, samples, *claw)
    _record(
        console,
        result,
        out,
        label or model,
        max_error_rate,
        model=model,
        split=split,
        samples=samples,
        bank=str(bank),
        temperature=temp,
        max_new_tokens=max_new_tokens,
        env_server=env_server,
        user=user,
    )


def _eval_specs(
    console: Console, model: str, bank: Path, split: str | None, tools: str, user: str | None, env_server: str | None
) -> list[TaskSpec]:
    """The environments to play, with the tools each prompt offers; exit 2 before any model loads
    when the policy spec, the user or the bank is bad (a persona left to the scripted user), or the split is empty."""
    from coworkenv.agents.tool_menu import narrow_tools
    from coworkenv.bank.sources import load_specs
    from coworkenv.rollout.environments import check_user
    from coworkenv.rollout.policies import check_policy_spec

    try:
        check_policy_spec(model)
        if user and env_server:
            raise ValueError("--env-server runs the server's scripted user: drop --user")
        specs = [narrow_tools(s, tools) for s in load_specs(bank, None if split in (None, "all") else split)]
        check_user(specs, user, env_server)
    except ValueError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from None
    if not specs:
        console.print(f"[red]no environments in {bank} for split {split!r}[/red]")
        raise typer.Exit(2)
    return specs


def _claw_scoring(
    console: Console, bank: Path, judge: str | None, retries: int, out: Path
) -> tuple[dict[str, dict[str, object]], Judge | None] | None:
    """The import reports of a bank of imported Claw-Eval tasks and the judge, or None for any other bank; exit 2
    when ``--judge`` is given for a bank without imported tasks, or names no usable endpoint."""
    from coworkenv.interop.claw_judge import Judge
    from coworkenv.interop.claw_score import REPORT, load_reports

    reports = load_reports(bank)
    if not reports:
        if judge is not None:
            console.print(
                f"[red]--judge: {escape(str(bank))} has no {REPORT}: only imported Claw-Eval tasks are judged"
            )
            raise typer.Exit(2)
        return None
    if judge is None:
        return reports, None
    out.mkdir(parents=True, exist_ok=True)
    try:
        return reports, Judge(judge, out / "judge_audit.jsonl", max_retries=retries)
    except (ValueError, ImportError) as exc:
        console.print(f"[red]--judge: {escape(str(exc))}[/red]")
        raise typer.Exit(2) from None


def _claw_rescore(
    console: Console, result: EvalResult, samples: int, reports: dict[str, dict[str, object]], judge: Judge | None
) -> None:
    """Score imported Claw-Eval tasks as Claw-Eval does (judged components by the judge, or listed as unscored);
    a judge that fails stops the run with exit 1."""
    from coworkenv.bank.llm.client import EndpointError
    from coworkenv.eval.metrics import compute_metrics
    from coworkenv.interop.claw_judge import JudgeError
    from coworkenv.interop.claw_score import rescore_all

    try:
        scoring = rescore_all(result.trajectories, reports, judge)
    except (EndpointError, JudgeError) as exc:
        console.print(f"[red]--judge: {escape(str(exc))}[/red]")
        raise typer.Exit(1) from None
    result.metrics = {**compute_metrics(result.trajectories, k=samples), "claw_eval": scoring}
    if scoring.get("tasks"):
        n = scoring["trials"]
        console.print(
            f"Claw-Eval ({scoring['label']}): average {scoring['average']:.1f}, Pass^{n} {scoring[f'pass^{n}']:.1f} "
            f"over {scoring['tasks']} task(s) x {n} trial(s)"
        )
    if scoring["unscored_components"]:
        n = len(scoring["unscored_components"])
        console.print(f"[yellow]rule-based figure: {n} LLM-judge component(s) not scored (give --judge)[/yellow]")


def _play(
    console: Console,
    policy: Policy | TaskPolicy | BatchPolicy,
    model: str,
    specs: list[TaskSpec],
    samples: int,
    seed: int,
    batch_size: int,
    env_server: str | None,
    env_token: str | None,
    user: str | None,
) -> EvalResult:
    """Play each environment ``samples`` times under a progress bar, here or on an environment server; a persona
    whose endpoint cannot be reached stops the run with exit 1."""
    from coworkenv.agents.llm_user import UserEndpointError
    from coworkenv.eval.runner import evaluate

    try:
        with Progress(console=console) as bar, remote_errors(console, env_server):
            task = bar.add_task(f"eval {short(model)}", total=len(specs) * samples)
            return evaluate(
                policy,
                specs,
                samples=samples,
                seed=seed,
                batch_size=batch_size,
                progress=lambda n: bar.advance(task, n),
                env_server=env_server,
                env_token=env_token,
                user=user,
            )
    except UserEndpointError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(1) from None


def _record(console: Console, result: EvalResult, out: Path, label: str, max_error_rate: float, **meta: object) -> None:
    """Save the run (errored episodes counted), show its metrics and report, and exit 1 when more
    episodes errored than --max-error-rate allows."""
    from coworkenv.eval.runner import save_eval

    errors = [t.error for t in result.trajectories]
    result.metrics["errors"] = sum(1 for e in errors if e is not None)
    save_eval(result, out, label, **meta)
    console.print(metrics_table(f"{label} on {meta['bank']} ({meta['split']})", result.metrics))
    _print_report(console, out)
    check_error_rate(console, errors, len(errors), max_error_rate, "episodes")


def report_cmd(
    run: Path = typer.Argument(..., help="run folder with evaluations and/or trainings"),
    title: str | None = typer.Option(None, help="page title"),
) -> None:
    """Re-render a run folder's HTML report (tables and plots) from its files."""
    from coworkenv.eval.report import write_report
    from coworkenv.runs import load_run

    if not run.is_dir():
        Console().print(f"[red]{run} is not a folder[/red]")
        raise typer.Exit(2)
    data = load_run(run)
    if not data.evals and not data.trainings:
        Console().print(f"[red]{run} holds no evaluation (metrics.json) or training (train_summary.json)[/red]")
        raise typer.Exit(2)
    try:
        page = write_report(run, title)
    except ImportError as exc:
        Console().print(f"[red]the report needs {exc.name}: {REPORT_EXTRA}[/red]")
        raise typer.Exit(2) from None
    typer.echo(str(page))
