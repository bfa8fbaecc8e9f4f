"""Packaging metadata: what the wheel ships must exist, and the license is declared the current way."""

from __future__ import annotations

import tomllib
from pathlib import Path

from coworkenv.bank.llm.prompts import EXAMPLES_DIR, pick_example

ROOT = Path(__file__).parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_data_pattern_ships_a_file() -> None:
    """A pattern that matches nothing leaves files out of the wheel (the LLM templates once were)."""
    for package, patterns in PROJECT["tool"]["setuptools"]["package-data"].items():
        for pattern in patterns:
            assert list((ROOT / "src" / package).glob(pattern)), f"package-data {package}: {pattern!r} matches no file"


def test_the_few_shot_pool_is_package_data() -> None:
    """A wheel ships only what package-data matches: the LLM generator's pool must be inside it, whole,
    and the repository's ``examples/`` must be that folder (one copy), so an installed ``synth --llm`` has it."""
    package = ROOT / "src" / "coworkenv"
    shipped = {
        p.resolve()
        for pattern in PROJECT["tool"]["setuptools"]["package-data"]["coworkenv"]
        for p in package.glob(pattern)
    }
    pool = {p.resolve() for p in EXAMPLES_DIR.glob("*.yaml")}
    assert len(pool) >= 14
    assert pool <= shipped, f"not shipped: {sorted(p.name for p in pool - shipped)}"
    assert EXAMPLES_DIR.resolve().is_relative_to(package.resolve())
    assert (ROOT / "examples").resolve() == EXAMPLES_DIR.resolve()
    assert f"{pick_example(())[0]}.yaml" in {p.name for p in shipped}


def test_the_license_is_an_spdx_expression_with_its_file() -> None:
    """The TOML-table form of project.license is deprecated in setuptools (removal 2027-02-18)."""
    project = PROJECT["project"]
    assert isinstance(project["license"], str)
    assert all((ROOT / name).is_file() for name in project["license-files"])
    requires = PROJECT["build-system"]["requires"]
    assert any(
        r.replace(" ", "").startswith("setuptools>=") and int(r.split(">=")[1].split(".")[0]) >= 77 for r in requires
    )
