"""Specs the model writes get the background records of a realistic workspace, as blueprint and composed ones do.

Against the scripted OpenAI-protocol server on loopback: the model's replies are the project's hand-written
examples (its own records, ids and words); the bank adds background around them, seeded by the job, and the
verifier judges the result by the same admission rule.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai", reason="the LLM generator needs the openai extra")

from coworkenv.bank.llm import loop
from coworkenv.bank.llm.audit import read_audit
from coworkenv.bank.llm.client import LLMClient
from coworkenv.bank.llm.prompts import WORKSPACE_RULES
from coworkenv.bank.llm.workspace import with_background
from coworkenv.bank.store import load_bank, synthesize_bank
from coworkenv.spec import TaskSpec, spec_from_data
from coworkenv.verify.admission import verify
from llm_server import Scripted, ScriptedServer
from llm_specs import as_json, example, leaked_in_context

CAPS = ("tool_coordination",)
REPLIES = ("customer_escalation_update", "sick_day_calendar_clear", "travel_spend_review")


def _script() -> dict[tuple[int, int], list[Scripted]]:
    return {(job, 0): [Scripted(as_json(example(name)))] for job, name in enumerate(REPLIES)}


def _bank(out: Path, workspace: str) -> tuple[list[TaskSpec], ScriptedServer]:
    with ScriptedServer(_script()) as server:
        client = LLMClient(f"openai:scripted@{server.base_url}", backoff_base=0.01)
        synthesize_bank(out, len(REPLIES), capabilities=CAPS, max_rounds=0, llm=client, workspace=workspace)
    specs = sorted((spec for spec, _ in load_bank(out)), key=lambda s: s.title)
    return specs, server


def _own(name: str) -> TaskSpec:
    data = example(name)
    data["capabilities"] = list(CAPS)
    return spec_from_data(data, name)


def _count(spec: TaskSpec) -> int:
    return sum(len(rows) for colls in spec.services.values() for rows in colls.values())


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_model_written_spec_is_admitted_in_a_realistic_workspace(tmp_path: Path) -> None:
    specs, server = _bank(tmp_path / "a", "realistic")
    assert len(specs) == len(REPLIES)
    for spec in specs:
        own = _own(next(n for n in REPLIES if example(n)["title"] == spec.title))
        assert _count(spec) >= 2 * _count(own), spec.title
        for service, colls in own.services.items():
            for coll, rows in colls.items():
                got = spec.services[service][coll]
                assert got[: len(rows)] == rows, "the model's records come first, unchanged"
                ids = [str(r["id"]) for r in got]
                assert len(set(ids)) == len(ids), f"{service}.{coll}: a background record took a task id"
        verification = verify(spec)  # the admission rule on the spec as banked: distractors, solvability, leaks
        assert verification.admitted, [f.kind for f in verification.findings]
    assert WORKSPACE_RULES["realistic"] in server.prompts(0)[0]
    _bank(tmp_path / "b", "realistic")
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b"), "the background is seeded by the job"


def test_a_small_workspace_keeps_the_model_records_alone(tmp_path: Path) -> None:
    specs, server = _bank(tmp_path, "small")
    for spec in specs:
        own = _own(next(n for n in REPLIES if example(n)["title"] == spec.title))
        assert spec.services == own.services
    assert WORKSPACE_RULES["realistic"] not in server.prompts(0)[0]


def test_background_ids_never_meet_the_model_ids_and_threads_follow_a_moved_id() -> None:
    own = _own("customer_escalation_update")  # mail ids msg-101.., where the background's own sequence runs
    spec = with_background(own, 11, "realistic")
    messages = spec.services["mail"]["messages"]
    ids = Counter(str(m["id"]) for m in messages)
    assert max(ids.values()) == 1 and len(messages) > 101
    background = messages[len(own.services["mail"]["messages"]) :]
    replies = [m for m in background if m.get("in_reply_to")]
    assert replies and all(m["in_reply_to"] in ids for m in replies)
    assert all(m["in_reply_to"] not in {r["id"] for r in own.services["mail"]["messages"]} for m in replies)
    assert spec == with_background(own, 11, "realistic") != with_background(own, 12, "realistic")


def test_a_leak_is_still_caught_with_background() -> None:
    data: dict[str, Any] = leaked_in_context(example("roadmap_sync_clarify_attendee"))
    data["capabilities"] = list(CAPS)
    spec = with_background(spec_from_data(json.loads(json.dumps(data)), "leaky"), 3, "realistic")
    assert _count(spec) > 2 * len(data["services"]["contacts"]["contacts"])
    verification = verify(spec)
    assert not verification.admitted and "leaked_fact" in verification.kinds


def test_records_no_workspace_fits_are_a_finding_not_the_end_of_the_bank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cornered(spec: TaskSpec, seed: int, workspace: str) -> TaskSpec:
        if spec.title == example(REPLIES[0])["title"]:
            raise KeyError("parent_id")
        return with_background(spec, seed, workspace)

    monkeypatch.setattr(loop, "with_background", cornered)
    with ScriptedServer(_script()) as server:
        client = LLMClient(f"openai:scripted@{server.base_url}", backoff_base=0.01)
        m = synthesize_bank(tmp_path, 2, capabilities=CAPS, max_rounds=0, llm=client)
    assert (m["admitted"], m["rejected"]) == (2, 1) and m["final_rejections"] == {"schema": 1}
    audit = read_audit(tmp_path, 0)
    assert "no realistic workspace fits the records: KeyError" in audit["rounds"][0]["findings"][0]
