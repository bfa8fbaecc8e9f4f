"""A run resumed under other code is refused with a clear message, not silently mixed: the code version moves
with every file that decides what the package does, and with nothing else."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from coworkenv import provenance
from coworkenv.rollout import rollout_bank
from coworkenv.rollout.store import StoreMismatch
from rollout_specs import mail_reply_spec

SPECS = [mail_reply_spec(i) for i in range(2)]


def version_of(package: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(provenance, "PACKAGE", str(package))
    provenance.code_version.cache_clear()
    try:
        return provenance.code_version()
    finally:
        provenance.code_version.cache_clear()


def test_the_code_version_is_the_package_version_and_a_digest() -> None:
    assert re.fullmatch(r".+\+[0-9a-f]{12}", provenance.code_version())
    assert provenance.code_version() == provenance.code_version()


def test_the_digest_moves_with_the_files_that_decide_what_the_package_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "coworkenv"
    (package / "runtime").mkdir(parents=True)
    (package / "runtime" / "step.py").write_text("STEP = 1\n")
    (package / "templates").mkdir()
    (package / "templates" / "prompt.md").write_text("Write a spec.\n")
    first = version_of(package, monkeypatch)

    (package / "runtime" / "__pycache__").mkdir()
    (package / "runtime" / "__pycache__" / "step.cpython-311.pyc").write_bytes(b"\0compiled")
    (package / "notes.txt").write_text("not code")
    assert version_of(package, monkeypatch) == first, "compiled files and other files do not count"

    changes = [
        lambda: (package / "runtime" / "step.py").write_text("STEP = 2\n"),
        lambda: (package / "templates" / "prompt.md").write_text("Write a spec!\n"),
        lambda: (package / "runtime" / "step.py").rename(package / "step.py"),
        lambda: (package / "new.yaml").write_text("id: x\n"),
    ]
    seen = {first}
    for change in changes:
        change()
        now = version_of(package, monkeypatch)
        assert now not in seen
        seen.add(now)
    shutil.rmtree(package / "runtime")  # a folder gone, with nothing the digest read in it: the same
    assert version_of(package, monkeypatch) in seen


def test_a_run_started_by_other_code_is_refused_and_one_from_before_the_check_resumes(tmp_path: Path) -> None:
    rollout_bank(SPECS, "oracle", 1, tmp_path, progress=False)
    manifest = tmp_path / "manifest.json"
    data = json.loads(manifest.read_text())
    assert data["config"]["code"] == provenance.code_version()
    before = (tmp_path / "episodes.jsonl").read_bytes()

    data["config"]["code"] = "0.1.0+000000000000"
    manifest.write_text(json.dumps(data))
    with pytest.raises(StoreMismatch, match=r"code='0\.1\.0\+000000000000'.*two versions of coworkenv"):
        rollout_bank(SPECS, "oracle", 2, tmp_path, progress=False)
    assert (tmp_path / "episodes.jsonl").read_bytes() == before, "a refused resume writes nothing"

    del data["config"]["code"]  # a run started before the code was recorded
    manifest.write_text(json.dumps(data))
    summary = rollout_bank(SPECS, "oracle", 2, tmp_path, progress=False)
    assert summary.skipped == 2 and summary.ran == 2
