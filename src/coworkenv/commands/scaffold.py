"""``coworkenv new blueprint|service NAME``: the files a new part starts from, ready to edit and test.

``blueprint`` writes a working workflow (a colleague looked up, then mailed) and its test file;
``service`` writes a working app (one collection, read and write tools, its declared damage) and
its test file. Both refuse to overwrite anything and print the line that registers the new part.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NoReturn

import typer

TEMPLATES = Path(__file__).parent / "templates"
NAME = re.compile(r"[a-z][a-z0-9_]{2,40}")
NAME_HELP = "snake_case, 3-41 characters, starting with a letter"
ROOT_OPTION = typer.Option(Path("."), help="the project checkout (holds src/coworkenv and tests/)")


def new_blueprint(
    name: str = typer.Argument(..., help="the workflow's name in snake_case, e.g. budget_review"),
    root: Path = ROOT_OPTION,
) -> None:
    """Write a new blueprint module and its test from templates."""
    module = root / "src" / "coworkenv" / "synth" / "blueprints" / f"{name}.py"
    test = root / "tests" / "blueprints" / f"test_{name}.py"
    values = _values(name, root, module, test)
    _write({"blueprint.py.tmpl": module, "blueprint_test.py.tmpl": test}, values)
    typer.echo(
        f"register it in src/coworkenv/synth/blueprints/__init__.py: import {name} and add {name}.{values['cls']} "
        f"to BLUEPRINTS; then run: pytest {test.relative_to(root)}"
    )


def new_service(
    name: str = typer.Argument(..., help="the service's name in snake_case, e.g. lockers; its tools are NAME_*"),
    root: Path = ROOT_OPTION,
) -> None:
    """Write a new service module and its test from templates."""
    from coworkenv.services.registry import SERVICES
    from coworkenv.synth.domains import FOLDER

    if name in SERVICES:
        _fail(f"{name!r} is already a service ({SERVICES[name].__module__}); pick another name", 1)
    if name in {path.stem for path in FOLDER.glob("*.yaml")}:  # a domain declares a service of its file's name
        _fail(f"{name!r} is already a domain's service ({FOLDER / name}.yaml); pick another name", 1)
    module = root / "src" / "coworkenv" / "services" / f"{name}.py"
    test = root / "tests" / "services" / f"test_{name}.py"
    values = _values(name, root, module, test)
    values |= {"record": f"{values['cls']}Item", "prefix": name[:3], "description": f"the {values['title'].lower()}"}
    _write({"service.py.tmpl": module, "service_test.py.tmpl": test}, values)
    typer.echo(
        f"register it in src/coworkenv/services/registry.py: import {values['cls']} from coworkenv.services.{name} "
        f"and add it to SERVICES; then run: pytest {test.relative_to(root)} tests/test_service_damage.py"
    )


def _values(name: str, root: Path, module: Path, test: Path) -> dict[str, str]:
    """The names the templates use, once ``name`` and the checkout are known to be good."""
    if not NAME.fullmatch(name):
        _fail(f"{name!r} is not a name: {NAME_HELP}", 2)
    if not module.parent.is_dir() or not test.parent.is_dir():
        _fail(f"{root}: not a coworkenv checkout (no {module.parent} or {test.parent})", 2)
    taken = [str(p) for p in (module, test) if p.exists()]
    if taken:
        _fail(f"{', '.join(taken)} already exist(s); nothing written", 1)
    return {
        "name": name,
        "cls": "".join(w.capitalize() for w in name.split("_")),
        "title": name.replace("_", " ").capitalize(),
    }


def _write(files: dict[str, Path], values: dict[str, str]) -> None:
    for template, path in files.items():
        path.write_text((TEMPLATES / template).read_text().format(**values))
        typer.echo(f"wrote {path}")


def _fail(message: str, code: int) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add ``new`` with its ``blueprint`` and ``service`` subcommands to the main app."""
    new = typer.Typer(help="Start a new part of coworkenv from a template.", no_args_is_help=True)
    new.command("blueprint")(new_blueprint)
    new.command("service")(new_service)
    app.add_typer(new, name="new")
