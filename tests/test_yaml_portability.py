"""Every YAML file the project ships reads the same with the pure-Python PyYAML loader as with libyaml.

``coworkenv`` parses specs with libyaml when it is there, but a spec is meant for any YAML 1.1/1.2
reader: a construct only libyaml accepts (a ``?`` inside a plain scalar of a flow mapping) would make
an example unreadable for other tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).parent.parent
SHIPPED = sorted(
    {
        p.resolve()
        for pattern in ("*.yaml", "*.yml")
        for top in ("src", "tests", "examples")
        for p in (ROOT / top).rglob(pattern)
    }
    | {ROOT / "mkdocs.yml"}
)


def read(path: Path, loader: Any) -> tuple[str, Any]:
    """("ok", the document) or ("error", the error's class name): broken test specs must break alike."""
    try:
        return "ok", yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    except yaml.YAMLError as exc:
        return "error", type(exc).__name__


def test_the_shipped_files_include_every_example() -> None:
    examples = {p.name for p in SHIPPED if p.parent.name == "examples"}
    assert len(examples) >= 20 and "it_laptop_request_chat_reply.yaml" in examples


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT.resolve())))
def test_pure_python_yaml_reads_every_shipped_file(path: Path) -> None:
    pure = read(path, yaml.SafeLoader)
    if path.parent.name == "examples" or path.name == "mkdocs.yml":
        assert pure[0] == "ok", f"{path.name}: the pure-Python loader refuses it ({pure[1]})"
    if hasattr(yaml, "CSafeLoader"):
        assert pure == read(path, yaml.CSafeLoader), f"{path.name}: libyaml and pure-Python PyYAML disagree"
