"""Resuming a rollout store: it reads each line's outcome only, so its cost is reading the file, not
validating every trajectory; a torn last line is dropped, a line whose outcome is no record's is a loud error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coworkenv.rollout import RolloutStore, rollout_bank
from coworkenv.rollout.store import Outcome, StoreFormatError
from coworkenv.trajectory import EpisodeRecord
from rollout_specs import mail_reply_spec

SPECS = [mail_reply_spec(i) for i in range(3)]


@pytest.fixture
def run(tmp_path: Path) -> Path:
    rollout_bank(SPECS, "oracle", 2, tmp_path / "run", progress=False)
    return tmp_path / "run"


def lines(run: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]


def append(run: Path, text: str) -> None:
    with open(run / "episodes.jsonl", "a", encoding="utf-8") as fh:
        fh.write(text)


def resume(run: Path) -> dict[str, Outcome]:
    """What a resumed run reads: :meth:`RolloutStore.open` under the settings the run was started with."""
    store = RolloutStore(run)
    return store.open(store.manifest()["config"])


def count_validations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    original = EpisodeRecord.model_validate

    def counted(data: object, **kw: object) -> EpisodeRecord:
        calls[0] += 1
        return original(data, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(EpisodeRecord, "model_validate", counted)
    return calls


def test_resume_validates_no_full_record_however_large_the_store(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = lines(run)[0]
    append(run, "".join(json.dumps(first | {"key": f"x#{k}", "sample": k}) + "\n" for k in range(300)))
    calls = count_validations(monkeypatch)
    outcomes = resume(run)
    assert len(outcomes) == 306 and calls[0] == 0
    assert len(list(RolloutStore(run).records())) == 306 and calls[0] == 306, "reading back validates each record"


def test_resume_outcomes_are_what_the_records_say(run: Path) -> None:
    error = lines(run)[0] | {"key": "late#0", "sample": 0, "status": "error", "passed": False, "score": None}
    append(run, json.dumps(error) + "\n" + json.dumps(error | {"status": "ok", "score": 1.0, "passed": True}) + "\n")
    outcomes = resume(run)
    assert outcomes == {r.key: Outcome.of(r) for r in RolloutStore(run).records()}
    assert outcomes["late#0"].status == "ok", "a retried error gives way to its rerun"


def test_resume_drops_a_torn_last_line_and_appends_on_a_clean_one(run: Path) -> None:
    before = (run / "episodes.jsonl").read_bytes()
    append(run, '{"key": "torn", "spec_id": "mail_reply-0", "sam')
    outcomes = resume(run)
    assert len(outcomes) == 6 and "torn" not in outcomes
    assert (run / "episodes.jsonl").read_bytes() == before
    rollout_bank(SPECS, "oracle", 3, run, progress=False)
    assert [r["sample"] for r in lines(run)][6:] == [2, 2, 2]


@pytest.mark.parametrize(
    ("change", "field"),
    [({"status": "finished"}, "status"), ({"sample": "first"}, "sample"), ({"passed": "maybe"}, "passed")],
)
def test_resume_stops_at_a_line_whose_outcome_is_no_record(run: Path, change: dict[str, object], field: str) -> None:
    append(run, json.dumps(lines(run)[0] | change) + "\n" + json.dumps(lines(run)[1]) + "\n")
    with pytest.raises(StoreFormatError, match=rf"episodes\.jsonl:7: {field}: "):
        resume(run)


def test_resume_and_read_back_skip_the_same_lines(run: Path) -> None:
    extra = json.dumps(lines(run)[0] | {"key": "y#0", "sample": 0})
    append(run, "not json\n" + extra + "\n")
    keys = set(resume(run))
    assert keys == {r.key for r in RolloutStore(run).records()} and "y#0" in keys


def test_a_trajectory_that_is_no_record_is_caught_where_it_is_read_back(run: Path) -> None:
    append(run, json.dumps(lines(run)[0] | {"key": "z#0", "trajectory": {"spec_id": "x"}}) + "\n")
    assert "z#0" in resume(run)
    with pytest.raises(StoreFormatError, match=r"episodes\.jsonl:7: trajectory\.messages: "):
        list(RolloutStore(run).records())
