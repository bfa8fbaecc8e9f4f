"""CLI commands on spec files: ``schema``, ``validate`` (static checks), ``verify`` (the admission rule), ``run``.

Each takes spec files as data: a file that does not parse, or whose fixtures do not fit
the service model, is reported as ``file: field: message`` and the command goes on with
the other files; it exits non-zero when any file failed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape

from coworkenv.rollout.policies import POLICY_SPECS
from coworkenv.spec import SpecError, TaskSpec, load_spec
from coworkenv.spec.io import spec_json_schema
from coworkenv.verify.findings import Finding

if TYPE_CHECKING:
    from coworkenv.verify.admission import Verification

console = Console()
SPECS_ARG = typer.Argument(..., metavar="SPEC...", help="spec files (YAML or JSON)")


def load_or_findings(path: Path) -> tuple[TaskSpec | None, list[Finding]]:
    """The spec in ``path``, or the schema findings that say why it cannot be read."""
    try:
        return load_spec(path), []
    except SpecError as exc:
        return None, [_schema_finding(p) for p in exc.problems]


def _schema_finding(problem: str) -> Finding:
    """A loader problem ("user.opening: Field required", "not valid YAML: …") as a finding."""
    where, sep, message = problem.partition(": ")
    if not sep or " " in where:
        where, message = "file", problem
    return Finding(kind="schema", where=where, evidence=message, hint="fix the file so it validates")


def _print_findings(path: Path, findings: list[Finding]) -> None:
    for f in findings:
        console.print(f"   {escape(str(path))}: {escape(f.where)}: {escape(f.evidence)} ([bold]{f.kind}[/bold])")
        if f.hint:
            console.print(f"      hint: {escape(f.hint)}")


def validate(specs: list[Path] = SPECS_ARG) -> None:
    """Validate spec files: schema, references and the static admission checks (every file is reported)."""
    from coworkenv.verify.static import static_findings

    failed = 0
    for path in specs:
        spec, findings = load_or_findings(path)
        if spec is not None:
            findings = static_findings(spec)
        if findings:
            failed += 1
            console.print(f"[red]✗ {escape(str(path))}[/red]")
            _print_findings(path, findings)
        else:
            console.print(f"[green]✓ {escape(str(path))}[/green] ({spec.id if spec else ''})")
    raise typer.Exit(1 if failed else 0)


def _report(
    path: Path, spec: TaskSpec | None, findings: list[Finding], verification: Verification | None
) -> dict[str, Any]:
    return {
        "path": str(path),
        "id": spec.id if spec else None,
        "admitted": verification.admitted if verification else False,
        "evaluation_only": bool(spec and spec.provenance.evaluation_only),
        "findings": [f.model_dump() for f in findings],
        "reference_score": verification.reference_score if verification else None,
        "probes": verification.probe_scores if verification else {},
    }


def verify(
    specs: list[Path] = SPECS_ARG,
    as_json: bool = typer.Option(False, "--json", help="print the reports as a JSON list"),
) -> None:
    """Run the admission rule on spec files: admitted or not, and every finding (kind, where, evidence, hint)."""
    from coworkenv.verify.admission import verify as admit

    reports = []
    for path in specs:
        spec, findings = load_or_findings(path)
        verification = admit(spec) if spec is not None else None
        if verification is not None:
            findings = verification.findings
        report = _report(path, spec, findings, verification)
        reports.append(report)
        if as_json:
            continue
        if report["evaluation_only"]:
            _print_evaluation_only(path, report["id"], findings)
        elif report["admitted"]:
            probes = report["probes"]
            worst = f", highest probe {max(probes.values()):.3f}" if probes else ""
            console.print(
                f"[green]✓ {escape(str(path))}[/green] ({report['id']}) admitted: reference "
                f"{report['reference_score']:.3f}, {len(probes)} probe(s) below the pass mark{worst}"
            )
        else:
            console.print(f"[red]✗ {escape(str(path))}[/red] ({report['id'] or 'unreadable'}) rejected")
            _print_findings(path, findings)
    if as_json:
        typer.echo(json.dumps(reports, indent=2))
    raise typer.Exit(0 if all(_verified(r) for r in reports) else 1)


def _verified(report: dict[str, Any]) -> bool:
    """Admitted, or an evaluation-only spec whose one finding is that it is evaluation-only."""
    if report["evaluation_only"]:
        return [f["kind"] for f in report["findings"]] == ["evaluation_only"]
    return bool(report["admitted"])


def _print_evaluation_only(path: Path, spec_id: str, findings: list[Finding]) -> None:
    problems = [f for f in findings if f.kind != "evaluation_only"]
    mark = "[red]✗" if problems else "[yellow]◆"
    end = "[/red]" if problems else "[/yellow]"
    console.print(
        f"{mark} {escape(str(path))}{end} ({spec_id}) EVALUATION-ONLY: an imported task graded by its source's "
        "rubric; never admitted to a training bank or exported for SFT/RL"
        + ("" if problems else "; its static checks pass")
    )
    _print_findings(path, problems)


def run(
    spec_path: Path = typer.Argument(..., metavar="SPEC"),
    policy: str = typer.Option("oracle", help=POLICY_SPECS),
    seed: int = typer.Option(0),
    as_json: bool = typer.Option(False, "--json", help="print the trajectory as JSON"),
    user: str | None = typer.Option(None, "--user", help="user simulator: scripted | openai:<model>@<url>"),
) -> None:
    """Run one episode and print a readable transcript and the grade (exit 1 if the episode errored)."""
    from coworkenv.agents.llm_user import UserEndpointError
    from coworkenv.rollout.environments import check_user, make_environment
    from coworkenv.rollout.policies import make_policy
    from coworkenv.runtime import run_episode
    from coworkenv.storage import json_text
    from coworkenv.transcript import print_grade, print_transcript
    from coworkenv.verify.fixtures import fixture_findings

    spec, findings = load_or_findings(spec_path)
    if spec is not None:
        findings = fixture_findings(spec)
    if findings or spec is None:
        console.print(f"[red]✗ {escape(str(spec_path))}: cannot run this spec[/red]")
        _print_findings(spec_path, findings)
        raise typer.Exit(2)
    try:
        agent = make_policy(policy)
        check_user([spec], user)
    except ValueError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from None
    try:
        traj = run_episode(make_environment(spec, seed, user=user), agent)
    except UserEndpointError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json_text(traj.model_dump(mode="json"), indent=2, sort_keys=False))
    else:
        print_transcript(console, traj)
        print_grade(console, traj)
    if traj.error:
        Console(stderr=True).print(f"[red]the episode ended in an error: {escape(traj.error)}[/red]")
        raise typer.Exit(1)


def schema() -> None:
    """Print the JSON Schema of a TaskSpec."""
    typer.echo(json.dumps(spec_json_schema(), indent=2))


def register(app: typer.Typer) -> None:
    """Add the spec-file commands to the main app."""
    app.command()(schema)
    app.command()(validate)
    app.command()(verify)
    app.command()(run)
