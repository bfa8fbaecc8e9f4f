"""The docs site builds with ``mkdocs build --strict``, and its generated reference pages cover the code.

The reference pages are made from the code when the site builds (``docs/generate``); these tests
read the same facts another way (the models' own fields, the Typer app's registrations, the
verifier's tables) so a page that misses a check kind, a command, a finding kind or a probe fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(ROOT / "docs"))

from generate import PAGES  # noqa: E402
from generate.findings_page import kind_meanings  # noqa: E402


def models_in(annotation: object) -> list[type[BaseModel]]:
    """The pydantic models a type annotation names, through lists, unions and Annotated."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in models_in(arg)]


def test_the_check_page_has_every_check_kind_and_rule() -> None:
    from coworkenv.spec.models import TaskSpec

    page = PAGES["reference/checks.md"]()
    kinds = [m.model_fields["kind"].default for m in models_in(TaskSpec.model_fields["checks"].annotation)]
    assert len(kinds) >= 10
    for kind in kinds:
        assert f"### `{kind}`" in page, kind
    field = "rules" if "rules" in TaskSpec.model_fields else "policies"
    for rule in models_in(TaskSpec.model_fields[field].annotation):
        literal = typing.get_args(rule.model_fields["rule"].annotation)
        assert literal and all(f"`{name}`" in page for name in literal)


def test_the_spec_page_has_every_model_of_the_schema() -> None:
    from coworkenv.spec.models import TaskSpec

    page = PAGES["reference/spec.md"]()
    for name in TaskSpec.model_json_schema()["$defs"]:
        assert f"## {name} {{ #def-{name.lower()} }}" in page
    for field in TaskSpec.model_fields:
        assert f"| `{field}` |" in page


def test_the_cli_page_has_every_command() -> None:
    import typer

    from coworkenv.cli import app

    page = PAGES["reference/cli.md"]()
    names = [c.name or c.callback.__name__ for c in app.registered_commands if c.callback]
    groups = [g.name for g in app.registered_groups]
    assert len(names) + len(groups) >= 10
    for name in [n.replace("_", "-") for n in names] + groups:
        assert f"## `coworkenv {name}" in page, name
    assert typer.main.get_command(app).commands["synth"].help.split("\n")[0] in page


def test_the_findings_page_has_every_kind_every_probe_and_its_hints() -> None:
    from coworkenv.verify import FINDING_KINDS
    from coworkenv.verify.probes import PROBES

    page = PAGES["reference/findings.md"]()
    assert list(kind_meanings()) == list(FINDING_KINDS)
    for kind in FINDING_KINDS:
        assert f"### `{kind}`" in page
    for name, probe in PROBES.items():
        assert type(probe).__doc__, f"probe {name} has no docstring to describe it"
        assert f"| `{name}` |" in page
    assert "rephrase the opening so it does not state the hidden value in any form" in page


def test_the_site_builds_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    pages = list((tmp_path / "site").rglob("index.html"))
    assert len(pages) >= 15
    checks = (tmp_path / "site" / "reference" / "checks" / "index.html").read_text(encoding="utf-8")
    assert "record_exists" in checks and "Workflow rules" in checks
