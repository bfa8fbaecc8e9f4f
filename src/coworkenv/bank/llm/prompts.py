"""Prompt messages for the generator, rendered from the templates in ``templates/``.

- ``generate``: the setting, the target capabilities (meaning, ingredients, probes), every
  spec construct with its meaning (:mod:`.constructs`, read off the models), the services
  catalogue, one admitted example from the package's ``examples/`` and the TaskSpec JSON Schema;
- ``diversify``: appended to ``generate`` with the bank's most common recent workflows;
- ``repair``: the verifier's findings and the failing runs' transcripts, sent after the
  model's previous reply so it edits its own spec.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from pathlib import Path

from coworkenv.bank.llm.catalog import services_catalogue
from coworkenv.bank.llm.constructs import constructs_text
from coworkenv.bank.llm.scenario import Scenario
from coworkenv.capabilities import CAPABILITIES
from coworkenv.prompt_files import package_template
from coworkenv.spec.io import spec_json_schema
from coworkenv.spec.models import GUARD_KINDS

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
"""The few-shot pool: the project's hand-written, admitted specs, shipped as package data (the
repository's top-level ``examples`` links here) so an installed generator has them too."""
CAPABILITY_LINE = re.compile(r"^capabilities: \[(.*)\]\s*$", re.MULTILINE)


@cache
def schema_text() -> str:
    return json.dumps(spec_json_schema(), separators=(",", ":"), sort_keys=True)


@cache
def _examples() -> tuple[tuple[str, frozenset[str], str], ...]:
    """(name, capabilities, text) of every example, smallest first."""
    out = []
    for path in sorted(EXAMPLES_DIR.glob("*.yaml"), key=lambda p: (p.stat().st_size, p.name)):
        text = path.read_text(encoding="utf-8")
        m = CAPABILITY_LINE.search(text)  # one flow-style line in every example; parsing all of them is slow
        caps = frozenset(c.strip() for c in m.group(1).split(",")) if m else frozenset()
        out.append((path.stem, caps, text))
    return tuple(out)


def pick_example(capabilities: tuple[str, ...]) -> tuple[str, str]:
    """The smallest example sharing the most target capabilities: (name, YAML text)."""
    pool = _examples()
    if not pool:
        raise FileNotFoundError(f"no few-shot examples in {EXAMPLES_DIR}")
    name, _, text = max(pool, key=lambda e: len(e[1] & set(capabilities)) - pool.index(e) / (10 * len(pool)))
    return name, "\n".join(line for line in text.splitlines() if not line.startswith("#"))


@cache
def prompt_version() -> str:
    """A digest of everything a prompt is built from except the job itself.

    A bank records it: a resume under other prompts (an upgrade, or an edit since the bank was
    started) would ask the jobs after the kill differently from those before it, so it is refused.
    """
    parts = [package_template("coworkenv.bank.llm", name).template for name in ("generate", "diversify", "repair")]
    parts += [constructs_text(), services_catalogue(), schema_text(), ", ".join(GUARD_KINDS)]
    parts += [capability_text(tuple(CAPABILITIES)), *WORKSPACE_RULES.values()]
    parts += [f"{name}\n{text}" for name, _, text in _examples()]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:16]


def capability_text(names: tuple[str, ...]) -> str:
    parts = []
    for name in names:
        cap = CAPABILITIES[name]
        ingredients = "; ".join(f"{i.name} ({i.description})" for i in cap.ingredients) or "none"
        parts.append(
            f"- {name}: {cap.description}\n  ingredients it needs: {ingredients}\n"
            f"  wrong behaviours that must fail: {', '.join(cap.probes)}"
        )
    return "\n".join(parts)


WORKSPACE_RULES = {
    "realistic": "- The workspace is realistic: a couple of hundred other records (weeks of mail, calendar, the "
    "directory, queues, channels...) join your fixtures before the run, none of which your task's words, values, "
    "days or flags select. Find records by filtering on what makes them yours, never by their position in a "
    "result (`${r.items[3]}`) or by the id you expect a new record to get; count only your own records.",
    "small": "",
}
"""The writing rule for each workspace size (:data:`coworkenv.synth.background.WORKSPACES`)."""


def generate_prompt(
    job: int, scenario: Scenario, capabilities: tuple[str, ...], avoid: tuple[str, ...], workspace: str = "realistic"
) -> str:
    """The first request of a job."""
    workflows = "\n".join(f"- {w}" for w in avoid)
    diversify = package_template("coworkenv.bank.llm", "diversify").substitute(workflows=workflows) if avoid else ""
    _, example = pick_example(capabilities)
    return package_template("coworkenv.bank.llm", "generate").substitute(
        scenario.as_dict(),
        capabilities=capability_text(capabilities),
        guards=", ".join(GUARD_KINDS),
        constructs=constructs_text(),
        services=services_catalogue(),
        example=example,
        schema=schema_text(),
        diversify=diversify,
        workspace=WORKSPACE_RULES[workspace],
        job=job,
    )


def repair_prompt(
    job: int, round_: int, capabilities: tuple[str, ...], findings: list[str], transcripts: list[str]
) -> str:
    """The request that hands the verifier's findings back to the model."""
    return package_template("coworkenv.bank.llm", "repair").substitute(
        capabilities=", ".join(capabilities),
        findings="\n".join(f"- {f}" for f in findings),
        transcripts="\n\n".join(transcripts) or "(none: the spec did not get as far as running)",
        job=job,
        round=round_,
    )
