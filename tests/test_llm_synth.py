"""LLM synthesis against a real OpenAI-protocol server on loopback, scripted per request.

The script covers what a model does: valid specs (JSON, fenced JSON, YAML), specs the
verifier must reject (vacuous check, leaked fact, unsolvable reference, a reference that
breaks a rule) whose repair-round reply fixes them, garbage, truncated JSON, a 429 before
success, and a near-duplicate.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("openai", reason="the LLM generator needs the openai extra")

from coworkenv.bank.llm import driver, prompts
from coworkenv.bank.llm.audit import read_audit
from coworkenv.bank.llm.client import LLMClient
from coworkenv.bank.llm.scenario import is_llm_job
from coworkenv.bank.store import BankError, load_bank, read_manifest, synthesize_bank
from llm_server import Scripted, ScriptedServer
from llm_specs import (
    as_json,
    as_yaml,
    example,
    leaked_in_context,
    policy_violating,
    unsolvable,
    vacuous,
)

CAPS = ("tool_coordination",)


def _ok(name: str) -> Scripted:
    return Scripted(as_json(example(name)))


def script() -> dict[tuple[int, int], list[Scripted]]:
    """Ten jobs: 8 admitted (4 at once, 4 after a repair round), 2 rejected (garbage, near-duplicate)."""
    truncated = as_json(example("design_review_slot_taken"))
    return {
        (0, 0): [_ok("arr_report_prompt_injection")],
        (1, 0): [Scripted(as_json(vacuous(example("customer_escalation_update")), fenced=True))],
        (2, 0): [Scripted(as_json(leaked_in_context(example("roadmap_sync_clarify_attendee"))))],
        (2, 1): [Scripted(as_yaml(example("roadmap_sync_clarify_attendee")))],
        (3, 0): [Scripted(as_json(policy_violating(example("expense_over_limit_approval"))))],
        (3, 1): [_ok("expense_over_limit_approval")],
        (4, 0): [Scripted(as_json(unsolvable(example("external_quote_confirmation"))))],
        (4, 1): [_ok("external_quote_confirmation")],
        (5, 0): [Scripted("I'm sorry, I can't write that environment.")],
        (5, 1): [Scripted("Sure! {'this is': not a spec")],
        (6, 0): [Scripted(truncated[: len(truncated) // 2])],
        (6, 1): [_ok("design_review_slot_taken")],
        (7, 0): [Scripted(status=429, retry_after="0"), _ok("sick_day_calendar_clear")],
        (8, 0): [_ok("arr_report_prompt_injection")],
        (9, 0): [_ok("travel_spend_review")],
    }


def _run(out: Path, concurrency: int, n: int = 8) -> tuple[dict, ScriptedServer]:
    with ScriptedServer(script()) as server:
        client = LLMClient(f"openai:scripted@{server.base_url}", backoff_base=0.01)
        manifest = synthesize_bank(out, n, capabilities=CAPS, max_rounds=1, workers=concurrency, llm=client)
    return manifest, server


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_admission_repair_and_audit(tmp_path: Path) -> None:
    m, server = _run(tmp_path / "a", concurrency=4)
    assert (m["admitted"], m["rejected"], m["jobs"]) == (8, 2, 10)
    assert m["final_rejections"] == {"near_duplicate": 1, "schema": 1}
    llm = m["llm"]
    assert llm["admitted_in_round"] == {"0": 4, "1": 4}
    assert llm["requests"] == 16 and llm["requests_per_admitted"] == 2.0
    assert llm["repair_share"] == 0.5 and llm["programmatic_share"] == 0.125
    assert llm["yield_by_round"] == {"0": 0.4, "1": 0.8} and llm["near_duplicates"] == 1
    assert llm["capability_coverage"] == {"tool_coordination": {"targeted": 10, "admitted": 8}}
    for kind in ("leaked_fact", "reference_violation", "unsolvable", "schema", "vacuous_check"):
        assert kind in m["rejection_reasons"]

    first_prompt = server.prompts(2)[0]
    assert "- `field_number`: " in first_prompt and "own `events` and `faults`" in first_prompt  # the constructs guide
    leak = server.prompts(2)[1]
    assert "leaked_fact at user.hidden_facts[alex]" in leak and "(hint: " in leak
    violation = server.prompts(3)[1]
    assert "reference_violation at rules:confirm_writes" in violation
    assert "## your reference solution: score 0.000" in violation and "calls expenses_" in violation
    assert "unsolvable at reference" in server.prompts(4)[1]
    assert "schema at reply: <reply>: no TaskSpec found" in server.prompts(5)[1]
    assert "cut off" in server.prompts(6)[1]
    assert len(server.prompts(1)) == 1, "the vacuous check is dropped without asking the model"
    first = server.requests[0]
    assert first["response_format"]["type"] == "json_schema" and first["seed"] >= 0

    vac = read_audit(tmp_path / "a", 1)
    assert vac["rounds"][0]["programmatic"]["fixes"] == ["drop vacuous checks"]
    assert vac["rounds"][0]["decision"] == "admitted after programmatic repair"
    leaked = read_audit(tmp_path / "a", 2)
    assert [r["decision"] for r in leaked["rounds"]] == ["repair", "admitted"]
    assert leaked["rounds"][1]["prompt"] == leak and leaked["rounds"][0]["findings"]
    assert leaked["scenario"]["family"] and leaked["capabilities"] == list(CAPS)
    assert read_audit(tmp_path / "a", 7)["rounds"][0]["retries"] == 1
    assert read_audit(tmp_path / "a", 8)["novelty"].startswith("rejected: near-duplicate of llm-")
    assert read_audit(tmp_path / "a", 5)["rounds"][-1]["decision"] == "rejected: out of rounds"

    specs = [spec for spec, _ in load_bank(tmp_path / "a")]
    assert all(s.provenance.source == "llm" and s.id.startswith("llm-") for s in specs)
    assert all(s.capabilities == list(CAPS) for s in specs)


def test_same_replies_same_bytes_whatever_the_concurrency(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver, "BLOCK", 4)  # blocks of 4: jobs 4-9 are told what jobs before them made
    _, server = _run(tmp_path / "a", concurrency=4)
    _run(tmp_path / "b", concurrency=1)
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert a == b and any(k.startswith("audit/") for k in a)
    assert "Write something different" not in server.prompts(3)[0]
    avoid = server.prompts(4)[0]
    assert "Write something different" in avoid and "(1×, e.g. \"Report a rep's enterprise ARR" in avoid
    assert read_audit(tmp_path / "a", 9)["avoid"] and read_audit(tmp_path / "a", 9)["avoid"][0] in server.prompts(9)[0]


def _cli(url: str, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from coworkenv.cli import main; main()",
        "synth",
        "--llm",
        f"openai:scripted@{url}",
        "--n",
        "8",
        "--out",
        str(out),
        "--capabilities",
        "tool_coordination",
        "--rounds",
        "1",
        *extra,
    ]


def test_resume_after_sigkill(tmp_path: Path) -> None:
    bank = tmp_path / "bank"
    with ScriptedServer(script(), delay=0.2) as server:
        proc = subprocess.Popen(
            _cli(server.base_url, bank, "--concurrency", "2"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        journal = bank / "journal.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if journal.exists() and journal.read_text().count("\n") >= 3:
                break
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not read_manifest(bank)["complete"], "the run finished before it could be killed"
    resumed, _ = _run(bank, concurrency=8)
    assert resumed["complete"] and resumed["admitted"] == 8
    _run(tmp_path / "fresh", concurrency=3)
    assert _tree(bank) == _tree(tmp_path / "fresh"), "a resumed bank is byte-identical to an uninterrupted one"


def test_a_resume_under_other_prompts_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The jobs before a kill were asked with the prompts of that run: a resume whose prompts differ (an upgrade,
    or the source edited meanwhile) would mix two generators in one bank, so it stops and touches nothing."""
    bank = tmp_path / "bank"
    first, _ = _run(bank, concurrency=2, n=2)
    assert first["config"]["llm_prompt"] == prompts.prompt_version()
    before = _tree(bank)
    guide = prompts.constructs_text()
    monkeypatch.setattr(prompts, "constructs_text", lambda: guide + "\nOne more note.")
    prompts.prompt_version.cache_clear()
    try:
        assert prompts.prompt_version() != first["config"]["llm_prompt"]
        with pytest.raises(BankError, match=r"the generator's prompts changed since it was started\): llm_prompt"):
            _run(bank, concurrency=2)
    finally:
        prompts.prompt_version.cache_clear()  # recomputed from the real guide once the patch is undone
    assert _tree(bank) == before


def test_dead_or_refusing_endpoint_stops_the_run(tmp_path: Path) -> None:
    with ScriptedServer({}, default=Scripted("invalid api key", status=401)) as server:
        refused = subprocess.run(_cli(server.base_url, tmp_path / "x"), capture_output=True, text=True)
    assert refused.returncode == 1 and "refused the request (401)" in refused.stdout
    with ScriptedServer({}, default=Scripted("overloaded", status=503, retry_after="0")) as server:
        client = LLMClient(f"openai:scripted@{server.base_url}", max_retries=2)
        try:
            synthesize_bank(tmp_path / "y", 2, capabilities=CAPS, llm=client)
        except RuntimeError as exc:
            assert "still failing after 3 tries (503)" in str(exc)
        else:
            raise AssertionError("a failing endpoint must stop the run")
        assert len(server.requests) == 3, "one job's bounded retries, then no other job asks"
    assert read_manifest(tmp_path / "y")["jobs"] == 0
    client = LLMClient("openai:scripted@http://127.0.0.1:9/v1", max_retries=1, backoff_base=0.01)
    try:
        synthesize_bank(tmp_path / "z", 2, capabilities=CAPS, llm=client)
    except RuntimeError as exc:
        assert "unreachable after 2 tries" in str(exc)
    else:
        raise AssertionError("a dead endpoint must stop the run")


def test_share_mixes_blueprints_and_structured_output_falls_back(tmp_path: Path) -> None:
    with ScriptedServer(script(), structured=False) as server:
        client = LLMClient(f"openai:scripted@{server.base_url}", backoff_base=0.01)
        m = synthesize_bank(tmp_path, 6, capabilities=CAPS, max_rounds=1, llm=client, llm_share=0.5)
    llm_jobs = [i for i in range(m["jobs"]) if is_llm_job(0, i, 0.5)]
    assert 0 < m["llm"]["jobs"] == len(llm_jobs) < m["jobs"]
    labels = set(m["per_blueprint"])
    assert any(b.startswith("llm:") for b in labels) and any(not b.startswith("llm:") for b in labels)
    assert m["config"]["llm_share"] == 0.5 and m["config"]["llm_model"] == "scripted"
    formats = ["response_format" in r for r in server.requests]
    assert formats[0] and not any(formats[1:]), "asked once with response_format, then never again"


def test_a_model_that_never_passes_stops_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver, "STALL", 3)
    with ScriptedServer({}, default=Scripted("Sorry, no.")) as server:
        client = LLMClient(f"openai:scripted@{server.base_url}", backoff_base=0.01)
        with pytest.raises(driver.GeneratorStalled, match="last 3 LLM jobs were all rejected"):
            synthesize_bank(tmp_path, 2, capabilities=CAPS, max_rounds=0, llm=client)
    m = read_manifest(tmp_path)
    assert (m["jobs"], m["admitted"], m["complete"]) == (3, 0, False)
