"""``coworkenv new blueprint NAME``: the files a new workflow starts from, ready to edit and test.

It writes a working blueprint (a colleague looked up, then mailed) and its test file under a
project checkout, refuses to overwrite anything, and prints the one line that registers it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NoReturn

import typer

TEMPLATES = Path(__file__).parent / "templates"
NAME = re.compile(r"[a-z][a-z0-9_]{2,40}")


def new_blueprint(
    name: str = typer.Argument(..., help="the workflow's name in snake_case, e.g. budget_review"),
    root: Path = typer.Option(Path("."), help="the project checkout (holds src/coworkenv and tests/)"),
) -> None:
    """Write a new blueprint module and its test from templates."""
    if not NAME.fullmatch(name):
        _fail(f"{name!r} is not a name: snake_case, 3-41 characters, starting with a letter", 2)
    module = root / "src" / "coworkenv" / "synth" / "blueprints" / f"{name}.py"
    test = root / "tests" / "blueprints" / f"test_{name}.py"
    if not module.parent.is_dir() or not test.parent.is_dir():
        _fail(f"{root}: not a coworkenv checkout (no {module.parent} or {test.parent})", 2)
    taken = [str(p) for p in (module, test) if p.exists()]
    if taken:
        _fail(f"{', '.join(taken)} already exist(s); nothing written", 1)
    values = {"name": name, "cls": "".join(w.capitalize() for w in name.split("_")), "title": name.replace("_", " ")}
    values["title"] = values["title"].capitalize()
    module.write_text((TEMPLATES / "blueprint.py.tmpl").read_text().format(**values))
    test.write_text((TEMPLATES / "blueprint_test.py.tmpl").read_text().format(**values))
    typer.echo(f"wrote {module}\nwrote {test}")
    typer.echo(
        f"register it in src/coworkenv/synth/blueprints/__init__.py: import {name} and add {name}.{values['cls']} "
        "to BLUEPRINTS; then run: pytest tests/blueprints/test_" + name + ".py"
    )


def _fail(message: str, code: int) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add ``new`` with its ``blueprint`` subcommand to the main app."""
    new = typer.Typer(help="Start a new part of coworkenv from a template.", no_args_is_help=True)
    new.command("blueprint")(new_blueprint)
    app.add_typer(new, name="new")
