"""Prompts shipped as files: each loads, names exactly the values its caller fills in, and takes any text verbatim."""

from __future__ import annotations

import re

import pytest

from coworkenv.agents.llm_user import _prompt
from coworkenv.prompt_files import package_template

PLACEHOLDERS = {
    ("coworkenv.agents", "user_phrase"): {"persona", "agent", "values", "script"},
    ("coworkenv.agents", "persona_system"): {"persona"},
    ("coworkenv.agents", "persona_turn"): {"transcript"},
    ("coworkenv.interop", "claw_judge_system"): set(),
}


@pytest.mark.parametrize(("package", "name"), sorted(PLACEHOLDERS))
def test_each_prompt_names_exactly_what_its_caller_fills_in(package: str, name: str) -> None:
    text = package_template(package, name).template
    assert set(re.findall(r"\$\{?([A-Za-z_]\w*)", text)) == PLACEHOLDERS[package, name]


def test_a_persona_with_dollars_and_braces_goes_in_verbatim() -> None:
    persona = "Pat, who budgets $HOME {rent} and ${salary} a month"
    system = _prompt("persona_system", persona=persona)
    assert persona in system and "$persona" not in system and not system.endswith("\n")


def test_a_value_the_caller_forgets_is_a_loud_error() -> None:
    with pytest.raises(KeyError, match="transcript"):
        _prompt("persona_turn")
