"""``coworkenv new blueprint``: the scaffold writes a blueprint the verifier admits, and never overwrites."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import finalize
from coworkenv.synth.world import World
from coworkenv.verify.admission import verify

CLI = [str(Path(sys.executable).parent / "coworkenv")]


def _checkout(tmp: Path) -> Path:
    (tmp / "src" / "coworkenv" / "synth" / "blueprints").mkdir(parents=True)
    (tmp / "tests" / "blueprints").mkdir(parents=True)
    return tmp


def _new(root: Path, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "new", "blueprint", name, "--root", str(root)], capture_output=True, text=True, timeout=120
    )


def test_the_scaffolded_blueprint_is_admitted(tmp_path: Path) -> None:
    root = _checkout(tmp_path)
    done = _new(root, "budget_mail")
    assert done.returncode == 0, done.stderr
    path = root / "src" / "coworkenv" / "synth" / "blueprints" / "budget_mail.py"
    spec_of = importlib.util.spec_from_file_location("budget_mail", path)
    assert spec_of is not None and spec_of.loader is not None
    module = importlib.util.module_from_spec(spec_of)
    spec_of.loader.exec_module(module)
    blueprint: Blueprint = module.BudgetMail()
    assert blueprint.name == "budget_mail"
    for seed in (1, 2):
        spec = finalize(blueprint.build(World(seed), frozenset()), seed=seed)
        report = verify(spec)
        assert report.admitted, report.findings
    test = (root / "tests" / "blueprints" / "test_budget_mail.py").read_text()
    assert "class TestBudgetMail(BlueprintCases)" in test and 'name = "budget_mail"' in test
    assert "BLUEPRINTS" in done.stdout  # says how to register it


def test_nothing_is_overwritten_and_bad_names_are_refused(tmp_path: Path) -> None:
    root = _checkout(tmp_path)
    assert _new(root, "budget_mail").returncode == 0
    module = root / "src" / "coworkenv" / "synth" / "blueprints" / "budget_mail.py"
    module.write_text("# edited by hand\n")
    again = _new(root, "budget_mail")
    assert again.returncode == 1 and "already exist" in again.stderr
    assert module.read_text() == "# edited by hand\n"
    for bad in ("Budget", "x", "../escape", "a-b"):
        refused = _new(root, bad)
        assert refused.returncode == 2 and "snake_case" in refused.stderr, bad
    elsewhere = _new(tmp_path / "nowhere", "budget_mail")
    assert elsewhere.returncode == 2 and "not a coworkenv checkout" in elsewhere.stderr
