"""Pool workers hand their store lines over through spool files: the store comes out byte for byte as an inline
run writes it, a copy that fails part way leaves only what a torn write leaves, and spool folders never outlive
their run."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from coworkenv import storage
from coworkenv.bank.sources import load_specs
from coworkenv.rollout import RolloutStore, RunOptions, rollout_bank
from coworkenv.rollout.store import SPOOL_PREFIX, Encoded, Outcome, Spool, Spooled
from coworkenv.storage import append_bytes, append_file, repair_jsonl

EXAMPLES = Path(__file__).parent.parent / "examples"
LINES = [b'{"a": 1}', '{"b": "\u00e9\u4e2d\U0001f600"}'.encode(), b"{}" * 40_000, b'{"c": 3}']


def untimed(path: Path) -> list[dict[str, Any]]:
    """The store's records without their wall-clock fields (the only ones that differ between two runs)."""
    records = []
    for line in path.read_bytes().splitlines():
        record = json.loads(line)
        record.pop("seconds")
        if record["trajectory"] is not None:
            record["trajectory"].pop("seconds")
        records.append(record)
    return records


def test_a_pooled_store_holds_the_lines_an_inline_run_writes_and_no_spool_is_left(tmp_path: Path) -> None:
    specs = load_specs(EXAMPLES)[:6]
    options = RunOptions(fault_rate=0.3)
    inline = rollout_bank(specs, "oracle", 7, tmp_path / "inline", options=options, progress=False)
    pooled = rollout_bank(specs, "oracle", 7, tmp_path / "pool", options=options, workers=2, progress=False)
    assert inline.counts == pooled.counts and pooled.ran == 42
    assert untimed(tmp_path / "pool" / "episodes.jsonl") == untimed(tmp_path / "inline" / "episodes.jsonl")
    assert sorted(p.name for p in (tmp_path / "pool").iterdir()) == ["episodes.jsonl", "manifest.json"]


def spooled(folder: Path, lines: list[bytes]) -> Spooled:
    outcome = Outcome("k", "s", 0, "ok", 1.0, True)
    return Spool(folder).put([Encoded(line, outcome) for line in lines])


@pytest.mark.parametrize("how", ["copy_file_range", "no copy_file_range", "other file system", "short copies"])
def test_appending_a_spooled_file_writes_what_appending_its_lines_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    real = getattr(os, "copy_file_range", None)
    if how == "no copy_file_range":
        monkeypatch.delattr(os, "copy_file_range", raising=False)
    elif how == "other file system":

        def refuse(*args: Any) -> int:
            raise OSError(errno.EXDEV, "cross-device")

        monkeypatch.setattr(os, "copy_file_range", refuse, raising=False)
    elif how == "short copies" and real is not None:
        monkeypatch.setattr(os, "copy_file_range", lambda src, dst, n, a, b: real(src, dst, min(n, 4099), a, b))
    expected, target = tmp_path / "expected.jsonl", tmp_path / "store.jsonl"
    for path in (expected, target):
        append_bytes(path, [b'{"before": true}'])
    append_bytes(expected, LINES)
    batch = spooled(tmp_path, LINES)
    append_file(target, batch.path)
    assert target.read_bytes() == expected.read_bytes()


def test_a_copy_that_fails_part_way_leaves_whole_lines_and_one_torn_line_that_reopening_cuts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = getattr(os, "copy_file_range", None)
    if real is None:
        pytest.skip("no copy_file_range on this platform")
    calls = []

    def fill_the_disk(src: int, dst: int, n: int, a: int, b: int) -> int:
        calls.append(n)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst, min(n, len(LINES[0]) + len(LINES[1]) + 5), a, b)

    store = RolloutStore(tmp_path / "run")
    store.open({})
    batch = Spooled(spooled(tmp_path, LINES).path, ())
    monkeypatch.setattr(os, "copy_file_range", fill_the_disk)
    with pytest.raises(OSError, match="No space"):
        store.append(batch)
    monkeypatch.undo()
    assert Path(batch.path).exists(), "a spooled batch that did not reach the store is not deleted"
    repair_jsonl(store.episodes_path)
    assert store.episodes_path.read_bytes() == LINES[0] + b"\n" + LINES[1] + b"\n"


def test_a_killed_runs_spool_folder_goes_when_the_store_is_reopened_and_a_live_runs_stays(tmp_path: Path) -> None:
    root = tmp_path / "run"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for pid in (int(dead.stdout), live.pid):
            folder = root / f"{SPOOL_PREFIX}{pid}"
            folder.mkdir(parents=True)
            spooled(folder, LINES)
        (root / f"{SPOOL_PREFIX}notapid").mkdir()
        RolloutStore(root).open({})
        left = sorted(p.name for p in root.iterdir())
    finally:
        live.kill()
        live.wait()
    assert left == [f"{SPOOL_PREFIX}{live.pid}", f"{SPOOL_PREFIX}notapid"]


@pytest.mark.parametrize(
    ("data", "kept"),
    [
        (b"", b""),
        (b"torn", b""),
        (b"a\nb\n", b"a\nb\n"),
        (b"a\n" + b"x" * 200_000, b"a\n"),
        (b"a\n" * 50_000 + b"b" * 70_000, b"a\n" * 50_000),
        (b"y" * 140_000, b""),
        (b"a\n" + b"x" * (1 << 16) + b"\n" + b"z" * ((1 << 16) - 1), b"a\n" + b"x" * (1 << 16) + b"\n"),
    ],
)
def test_repair_cuts_exactly_the_torn_last_line(tmp_path: Path, data: bytes, kept: bytes) -> None:
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(data)
    repair_jsonl(path)
    assert path.read_bytes() == kept


@pytest.mark.parametrize("spooled_batches", [False, True])
def test_appends_not_synced_start_the_writeback_of_exactly_what_they_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spooled_batches: bool
) -> None:
    started: list[tuple[int, int]] = []
    monkeypatch.setattr(
        storage, "_sync_file_range", lambda: lambda fd, offset, length, flags: started.append((offset, length))
    )
    target = tmp_path / "episodes.jsonl"
    for i, sync in enumerate([False, False, True, False]):
        lines = [line + str(i).encode() for line in LINES[:3]]
        if spooled_batches:
            append_file(target, spooled(tmp_path, lines).path, sync=sync)
        else:
            append_bytes(target, lines, sync=sync)
    sizes = [len(b"\n".join([*LINES[:3], b""])) + 3] * 4
    ends = [sum(sizes[: i + 1]) for i in range(4)]
    assert started == [(0, sizes[0]), (ends[0], sizes[1]), (ends[2], sizes[3])], "a synced append needs none"
    assert target.stat().st_size == ends[-1]


def test_appends_work_where_writeback_cannot_be_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage, "_sync_file_range", lambda: None)
    append_bytes(tmp_path / "a.jsonl", LINES, sync=False)
    append_file(tmp_path / "b.jsonl", spooled(tmp_path, LINES).path, sync=False)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes() == b"\n".join([*LINES, b""])
