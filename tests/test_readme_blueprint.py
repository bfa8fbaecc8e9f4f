"""The README's "Writing a blueprint" example builds environments that are admitted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from coworkenv.bank.repair import synthesize
from coworkenv.synth.blueprints import BLUEPRINTS, Blueprint
from coworkenv.synth.composer import Recipe

README = Path(__file__).parents[1] / "README.md"


def _example() -> type[Blueprint]:
    text = README.read_text()
    block = re.search(r"### Writing a blueprint.*?```python\n(.*?)```", text, re.S)
    assert block, "the README lost its blueprint example"
    scope: dict[str, object] = {"__name__": "readme_example"}
    exec(compile(block.group(1), "README.md", "exec"), scope)  # our own documentation, not spec content
    found = [v for v in scope.values() if isinstance(v, type) and issubclass(v, Blueprint) and v is not Blueprint]
    assert len(found) == 1
    return found[0]


def test_the_readme_blueprint_is_admitted(monkeypatch: pytest.MonkeyPatch) -> None:
    cls = _example()
    monkeypatch.setitem(BLUEPRINTS, cls.name, cls())
    for modifiers in ((), ("withhold",), ("policy", "follow_up")):
        outcome = synthesize(Recipe(cls.name, 1, modifiers))
        assert outcome.spec is not None, outcome.verification.reasons
        assert outcome.verification.reference_score == 1.0
