"""The rollout store's typed record: what rollout writes is what data/ reads, validated on read.

A record written before the record became a model (a plain dict with the same keys) still
loads; a line that is no episode record stops the reader with its file, line and field.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coworkenv.cli import app
from coworkenv.data.rl import export_rl
from coworkenv.data.sft import export_sft
from coworkenv.rollout import RolloutStore, rollout_bank
from coworkenv.rollout.store import StoreFormatError
from coworkenv.trajectory import EpisodeRecord
from rollout_specs import mail_reply_spec

SPECS = [mail_reply_spec(i) for i in range(2)]


@pytest.fixture
def run(tmp_path: Path) -> Path:
    rollout_bank(SPECS, "oracle", 1, tmp_path / "run", progress=False)
    return tmp_path / "run"


def test_store_lines_are_episode_records_and_read_back_typed(run: Path) -> None:
    lines = (run / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    records = list(RolloutStore(run).records())
    assert [EpisodeRecord.model_validate_json(line) for line in sorted(lines)] == sorted(records, key=lambda r: r.key)
    assert all(r.trajectory is not None and r.trajectory.grade is not None for r in records)


def test_a_record_written_as_a_plain_dict_still_loads(tmp_path: Path) -> None:
    """The exact dict shape the store held before the model existed, error record included."""
    legacy = {
        "key": "x#0",
        "spec_id": "x",
        "sample": 0,
        "seed": 0,
        "policy": "openai:m",
        "status": "error",
        "error": "ConnectionError: down",
        "score": None,
        "passed": False,
        "seconds": None,
        "trajectory": None,
    }
    (tmp_path / "episodes.jsonl").write_text(json.dumps(legacy) + "\n", encoding="utf-8")
    (record,) = RolloutStore(tmp_path).records()
    assert record.model_dump(mode="json") == legacy


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"status": "finished"}, "status"),
        ({"trajectory": {"spec_id": "x"}}, "trajectory.messages"),
        ({"sample": "first"}, "sample"),
        ({"extra_field": 1}, "extra_field"),
    ],
)
def test_a_line_that_is_no_record_names_file_line_and_field(run: Path, change: dict, field: str) -> None:
    path = run / "episodes.jsonl"
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(first | change) + "\n")
    with pytest.raises(StoreFormatError, match=rf"episodes\.jsonl:3: {field}: "):
        list(RolloutStore(run).records())
    with pytest.raises(StoreFormatError):
        export_rl(run, run.parent / "rl")


def test_export_of_a_foreign_line_exits_non_zero_and_writes_nothing(run: Path) -> None:
    path = run / "episodes.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + json.dumps({"messages": []}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["export", "sft", str(run), "--out", str(run.parent / "sft")])
    assert result.exit_code == 2 and "l:3: key: Field required" in result.output.replace("\n", "")
    assert not (run.parent / "sft").exists()
    with pytest.raises(StoreFormatError):
        export_sft(run, run.parent / "sft2")
