"""The command-line reference, read off the Typer app: every command, its help, arguments and options."""

from __future__ import annotations

import json
from typing import Any

import typer

from coworkenv.cli import app

from .schema_pages import cell, prose


def commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every leaf command of the app as (its words after ``coworkenv``, the command), depth first."""
    out: list[tuple[tuple[str, ...], Any]] = []
    for name, command in sorted(getattr(group, "commands", {}).items()):
        if getattr(command, "hidden", False):
            continue
        if getattr(command, "commands", None):
            out += commands(command, (*path, name))
        else:
            out.append(((*path, name), command))
    return out


def _default(param: Any) -> str:
    if param.required:
        return "required"
    default = param.default
    if default is None or default == [] or default is False:
        return ""
    return f"`{json.dumps(default) if isinstance(default, bool) else default}`"


def _usage(words: tuple[str, ...], command: Any) -> str:
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    parts = ["coworkenv", *words, "[OPTIONS]"]
    for p in arguments:
        name = p.name.upper() + ("…" if p.nargs == -1 else "")
        parts.append(name if p.required else f"[{name}]")
    return " ".join(parts)


def param_rows(command: Any) -> list[str]:
    rows = ["| argument or option | default | meaning |", "|---|---|---|"]
    for p in command.params:
        if getattr(p, "hidden", False):
            continue
        flag = getattr(p, "is_flag", False)
        names = ", ".join(f"`{o}`" for o in (*p.opts, *p.secondary_opts)) if p.param_type_name == "option" else ""
        label = names or f"`{p.name.upper()}`"
        label += "" if flag or p.param_type_name == "argument" else " *value*"
        rows.append(f"| {label} | {cell(_default(p))} | {cell(getattr(p, 'help', '') or '')} |")
    return rows if len(rows) > 2 else []


def cli_page() -> str:
    """A table of every command, then one section per command, in alphabetical order."""
    root = typer.main.get_command(app)
    lines = [
        "# Command line",
        "",
        "Generated from the `coworkenv` Typer app when the site is built; `coworkenv COMMAND --help`",
        "prints the same. Every command exits non-zero with a message when its input is bad or its work failed.",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    found = commands(root)
    for words, command in found:
        slug = "-".join(words)
        lines.append(f"| [`coworkenv {' '.join(words)}`](#{slug}) | {cell((command.help or '').split(chr(10))[0])} |")
    for words, command in found:
        slug = "-".join(words)
        lines += ["", f"## `coworkenv {' '.join(words)}` {{ #{slug} }}", "", f"    {_usage(words, command)}", ""]
        lines += [prose(command.help or ""), ""]
        lines += param_rows(command) or ["No arguments or options."]
    return "\n".join(lines) + "\n"
