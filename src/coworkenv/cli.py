"""The command line: one Typer app; every command lives in ``commands/``, one module per stage."""

from __future__ import annotations

import typer

from coworkenv.commands import claw_eval, data, evaluate, quickstart, rollout, scaffold, serve, specs, synth, train

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Synthesize and use environments for AI coworkers.")


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


for _stage in (quickstart, specs, synth, rollout, data, train, evaluate, serve, claw_eval, scaffold):
    _stage.register(app)


def main() -> None:
    app()
