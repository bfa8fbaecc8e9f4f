"""CLI commands for the rollout stage: ``coworkenv rollout``."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.console import Console

from coworkenv.commands.failures import MAX_ERROR_RATE, check_error_rate
from coworkenv.rollout.policies import POLICY_SPECS


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the main app."""

    @app.command("rollout")
    def rollout(
        bank: Path = typer.Option(..., "--bank", help="bank folder, folder of spec files, or one spec file"),
        policy: str = typer.Option("oracle", "--policy", help=POLICY_SPECS),
        samples: int = typer.Option(1, "--samples", "-k", min=1, help="episodes per environment (K)"),
        out: Path = typer.Option(..., "--out", help="run folder (resumed if it exists)"),
        workers: int | None = typer.Option(
            None,
            "--workers",
            "-w",
            min=1,
            help="processes playing episodes (default: local CPUs; oracle and probes play in this one too; "
            "with --ray: actors, default cluster CPUs)",
        ),
        ray: str | None = typer.Option(None, "--ray", help="run on Ray: 'local' or a cluster address"),
        timeout: float = typer.Option(300.0, "--timeout", help="per-episode time budget in seconds (0: none)"),
        seed: int = typer.Option(0, "--seed", help="environment seed of sample 0 (sample k uses seed+k)"),
        split: str | None = typer.Option(None, "--split", help="bank split: train | heldout"),
        user: str | None = typer.Option(None, "--user", help="user simulator: scripted | openai:<model>@<url>"),
        fault_rate: float = typer.Option(0.0, "--fault-rate", min=0.0, max=1.0, help="random transient tool errors"),
        max_turns: int | None = typer.Option(None, "--max-turns", min=1, help="cap on turns per episode"),
        env_server: str | None = typer.Option(
            None, "--env-server", help="play episodes on `coworkenv serve http` at URL"
        ),
        env_token: str | None = typer.Option(None, "--env-token", envvar="COWORKENV_TOKEN", help="its bearer token"),
        temperature: float | None = typer.Option(None, "--temperature", min=0.0, help="sampling temperature (models)"),
        max_new_tokens: int | None = typer.Option(None, "--max-new-tokens", min=1, help="tokens per turn (models)"),
        max_error_rate: float = MAX_ERROR_RATE,
    ) -> None:
        """Run K episodes of a policy on every environment of a bank, in parallel and resumably.

        Episodes that ended in an error are run again when the command is repeated.
        """
        from rich.markup import escape

        from coworkenv.rollout import RunOptions, rollout_bank
        from coworkenv.rollout.policies import sampling_options
        from coworkenv.rollout.runner import RolloutError
        from coworkenv.rollout.store import StoreMismatch, iter_episodes

        console = Console()
        workers = workers or (0 if ray else os.cpu_count() or 1)
        options = sampling_options(policy, temperature=temperature, max_new_tokens=max_new_tokens)
        try:
            summary = rollout_bank(
                bank,
                policy,
                samples,
                out,
                workers=workers,
                ray_address=ray,
                options=RunOptions(
                    timeout=timeout or None,
                    user=user,
                    fault_rate=fault_rate,
                    max_turns=max_turns,
                    env_server=env_server,
                    env_token=env_token,
                ),
                seed=seed,
                split=split,
                policy_options=options,
                console=console,
            )
        except (StoreMismatch, ValueError, RolloutError) as exc:
            console.print(f"[red]{escape(str(exc))}[/red]")
            raise typer.Exit(2) from None
        c = summary.counts
        console.print(
            f"{summary.ran} episodes run, {summary.skipped} already done; {c['episodes']} in {out}: "
            f"{c['passed']} passed, mean score {c['mean_score']}, by status {c['by_status']} "
            f"({summary.episodes_per_second:.1f} episodes/s)"
        )
        errors = [r.error if r.status == "error" else None for r in iter_episodes(out, status=None)]
        check_error_rate(console, errors, len(errors), max_error_rate, "episodes (run again to retry them)")
