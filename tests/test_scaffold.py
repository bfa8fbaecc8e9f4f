"""``coworkenv new blueprint``: the scaffold writes a blueprint the verifier admits, and never overwrites."""

from __future__ import annotations

import importlib.util
import os
import shutil
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


def _new(root: Path, name: str, kind: str = "blueprint") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "new", kind, name, "--root", str(root)], capture_output=True, text=True, timeout=120)


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


def _service_checkout(tmp: Path) -> Path:
    (tmp / "src" / "coworkenv" / "services").mkdir(parents=True)
    (tmp / "tests" / "services").mkdir(parents=True)
    shutil.copy(Path(__file__).parent / "services" / "conftest.py", tmp / "tests" / "services" / "conftest.py")
    return tmp


def _new_service(root: Path, name: str) -> subprocess.CompletedProcess[str]:
    return _new(root, name, "service")


def test_the_scaffolded_service_declares_damage_and_its_test_passes(tmp_path: Path) -> None:
    root = _service_checkout(tmp_path)
    done = _new_service(root, "facility_desk")
    assert done.returncode == 0, done.stderr
    assert "SERVICES" in done.stdout and "registry.py" in done.stdout  # says how to register it
    services = root / "src" / "coworkenv" / "services"
    # the generated test imports coworkenv.services.facility_desk: run it with the checkout's services on the path
    run_test = (
        "import sys, pytest, coworkenv.services as s; s.__path__.append(sys.argv[1]); "
        "from coworkenv.services.facility_desk import FacilityDesk; "
        "from test_service_damage import test_each_service_declares_its_damage as declared; "
        "declared(FacilityDesk); sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', sys.argv[2]]))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    ran = subprocess.run(
        [sys.executable, "-c", run_test, str(services), str(root / "tests" / "services" / "test_facility_desk.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        env=env,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "5 passed" in ran.stdout


def test_a_taken_service_name_or_a_bad_identifier_is_refused(tmp_path: Path) -> None:
    root = _service_checkout(tmp_path)
    taken = _new_service(root, "mail")
    assert taken.returncode == 1 and "already a service" in taken.stderr
    assert not (root / "src" / "coworkenv" / "services" / "mail.py").exists()
    domain = _new_service(root, "facilities")  # a shipped domain declares a service of that name
    assert domain.returncode == 1 and "already a domain's service" in domain.stderr
    assert not (root / "src" / "coworkenv" / "services" / "facilities.py").exists()
    for bad in ("Facilities", "fx", "../escape", "a-b", "9lives"):
        refused = _new_service(root, bad)
        assert refused.returncode == 2 and "snake_case" in refused.stderr, bad
    assert _new_service(root, "lockers").returncode == 0
    again = _new_service(root, "lockers")
    assert again.returncode == 1 and "already exist" in again.stderr
    assert list((root / "src" / "coworkenv" / "services").iterdir()) == [root / "src/coworkenv/services/lockers.py"]
