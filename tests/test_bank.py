"""The environment bank: resumable after a kill, consistent counts, splits, filters."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coworkenv.bank.store import BankError, heldout_blueprints, load_bank, read_manifest, split_of, synthesize_bank
from coworkenv.spec import canonical_json, content_id, spec_from_data
from coworkenv.spec.io import compact_json
from coworkenv.synth.blueprints import HELD_OUT

N = 240


def _ids(bank: Path) -> list[str]:
    return [
        json.loads(line)["id"]
        for shard in sorted((bank / "shards").glob("*.jsonl"))
        for line in shard.read_text().splitlines()
    ]


def _assert_consistent(bank: Path, n: int) -> None:
    manifest = read_manifest(bank)
    journal = [json.loads(line) for line in (bank / "journal.jsonl").read_text().splitlines()]
    ids = _ids(bank)
    assert len(ids) == len(set(ids)) == n == manifest["admitted"]
    assert manifest["complete"]
    assert manifest["jobs"] == len(journal) == manifest["admitted"] + manifest["rejected"]
    assert [e["index"] for e in journal] == list(range(len(journal)))
    assert sum(manifest["shards"].values()) == n == manifest["split"]["train"] + manifest["split"]["heldout"]
    assert sum(d["jobs"] for d in manifest["per_blueprint"].values()) == manifest["jobs"]
    assert sum(manifest["repair_rounds"].values()) == n


def test_resume_after_kill(tmp_path: Path) -> None:
    bank = tmp_path / "bank"
    cmd = [
        sys.executable,
        "-c",
        "from coworkenv.cli import main; main()",
        "synth",
        "--n",
        str(N),
        "--seed",
        "5",
        "--out",
        str(bank),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = bank / "journal.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists() and journal.read_text().count("\n") >= 32:
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not read_manifest(bank)["complete"], "the run finished before it could be killed"
    synthesize_bank(bank, N, seed=5)
    _assert_consistent(bank, N)
    fresh = tmp_path / "fresh"
    synthesize_bank(fresh, N, seed=5)
    assert sorted(_ids(fresh)) == sorted(_ids(bank)), "a resumed bank holds exactly what an uninterrupted one does"


def test_torn_writes_are_repaired(tmp_path: Path) -> None:
    synthesize_bank(tmp_path, 20, seed=1)
    shard = next((tmp_path / "shards").glob("train-*.jsonl"))
    orphan = shard.read_text().splitlines()[0]
    with open(shard, "a") as fh:  # a record written before a kill but never journaled, then a torn line
        fh.write(orphan + "\n" + orphan[:40])
    with open(tmp_path / "journal.jsonl", "a") as fh:
        fh.write('{"index": 20, "stat')
    synthesize_bank(tmp_path, 30, seed=1)
    _assert_consistent(tmp_path, 30)


@pytest.mark.parametrize(
    "line",
    [
        "[1, 2]",
        '{"index": 4, "blueprint": "onboarding", "rounds": 0, "reasons": "not a list", "status": "rejected"}',
        '{"index": 4, "blueprint": "onboarding", "rounds": "0", "reasons": [], "status": "admitted"}',
    ],
)
def test_a_hostile_journal_line_is_named_and_nothing_is_lost(tmp_path: Path, line: str) -> None:
    jobs = synthesize_bank(tmp_path, 4, seed=1)["jobs"]
    with open(tmp_path / "journal.jsonl", "a") as fh:
        fh.write(line + "\n")
    files = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(BankError, match=rf"journal\.jsonl: line {jobs + 1}: not a job entry"):
        synthesize_bank(tmp_path, 8, seed=1)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == files


def test_load_bank_and_split(tmp_path: Path) -> None:
    manifest = synthesize_bank(tmp_path, 40, seed=2)
    pairs = list(load_bank(tmp_path))
    assert len(pairs) == 40 == manifest["admitted"]
    for spec, report in pairs:
        assert report.admitted and spec.id == content_id(spec)
    for shard in sorted((tmp_path / "shards").glob("*.jsonl")):
        for line in shard.read_text().splitlines():  # each line: compact JSON, the spec in its canonical form
            record = json.loads(line)
            spec = spec_from_data(record["spec"])
            assert line == compact_json(record) and f'"spec":{canonical_json(spec)},' in line
            assert record["id"] == spec.id == content_id(spec)
            assert hashlib.sha256(canonical_json(spec, spec_id="").encode()).hexdigest()[:16] == spec.id
    held = list(load_bank(tmp_path, split="heldout"))
    assert held and all(spec.provenance.blueprint in HELD_OUT for spec, _ in held)
    assert len(held) + len(list(load_bank(tmp_path, split="train"))) == 40
    assert set(heldout_blueprints(tmp_path)) == set(HELD_OUT)
    assert split_of("purchase_order") == "heldout" and split_of("onboarding") == "train"


def test_filters_and_settings(tmp_path: Path) -> None:
    manifest = synthesize_bank(tmp_path, 12, seed=3, capabilities=["dynamic_state"], held_out=["meeting_scheduling"])
    assert all("dynamic_state" in spec.capabilities for spec, _ in load_bank(tmp_path))
    assert manifest["split"]["held_out_blueprints"] == ["meeting_scheduling"]
    with pytest.raises(BankError, match="other settings"):
        synthesize_bank(tmp_path, 12, seed=4)
    with pytest.raises(BankError, match="unknown blueprints"):
        synthesize_bank(tmp_path / "x", 5, blueprints=["teleport"])


def test_cli_synth_and_bank_stats(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app

    runner = CliRunner()
    result = runner.invoke(
        app, ["synth", "--n", "8", "--seed", "4", "--out", str(tmp_path), "--blueprints", "inbox_triage,leave_request"]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["bank", "stats", str(tmp_path)])
    assert result.exit_code == 0
    for heading in ("rejection reasons", "capabilities", "blueprints", "inbox_triage", "shards", "diversity: all"):
        assert heading in result.output
    assert (
        runner.invoke(app, ["synth", "--n", "2", "--out", str(tmp_path / "y"), "--capabilities", "telepathy"]).exit_code
        == 2
    )
    assert "distinct ordered tool sets" in result.output and "built-in tools no reference uses" in result.output
    assert runner.invoke(app, ["bank", "stats", str(tmp_path / "nothing")]).exit_code == 2


def test_a_process_pool_builds_the_same_bytes_and_every_run_reports_its_figures(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from coworkenv.bank.store import BUILDS, read_builds
    from coworkenv.cli import app

    def files(bank: Path) -> dict[str, bytes]:
        return {str(p.relative_to(bank)): p.read_bytes() for p in bank.rglob("*") if p.is_file() and p.name != BUILDS}

    synthesize_bank(tmp_path / "inline", 12, seed=6)
    synthesize_bank(tmp_path / "pool", 6, seed=6, workers=2)
    synthesize_bank(tmp_path / "pool", 12, seed=6, workers=2)  # grown by a second run
    assert files(tmp_path / "pool") == files(tmp_path / "inline")
    first, second = read_builds(tmp_path / "pool")
    assert (first["backend"], first["workers"], first["admitted"], second["admitted"]) == ("processes", 2, 6, 6)
    assert first["per_cpu_second"] is None and read_builds(tmp_path / "inline")[0]["per_cpu_second"] > 0
    synthesize_bank(tmp_path / "pool", 12, seed=6, workers=2)  # nothing left to do: no run, no figures
    assert len(read_builds(tmp_path / "pool")) == 2
    result = CliRunner().invoke(app, ["bank", "stats", str(tmp_path / "pool")])
    assert result.exit_code == 0, result.output
    assert "builds" in result.output and result.output.count("processes") == 2, result.output
    with open(tmp_path / "pool" / BUILDS, "a") as fh:
        fh.write('{"backend": "ray"}\n')
    result = CliRunner().invoke(app, ["bank", "stats", str(tmp_path / "pool")])
    assert result.exit_code == 2 and "line 3: not a build record" in " ".join(result.output.split())
