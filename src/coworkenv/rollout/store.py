"""The resumable rollout store: one JSONL line per finished episode, plus a manifest.

Episodes are keyed by ``(spec_id, sample)``. Only the driver process writes the store (pool workers hand it
their lines through files of a spool folder: :class:`Spool`).

Durability rule: each batch of records reaches the file in one ``write`` of whole lines as
soon as it arrives, so a killed driver (SIGKILL, a crash) loses no episode it has written:
written data is the kernel's, whatever becomes of the process. A kill in the middle of a
write leaves at most one torn last line, which is truncated on reopen. ``fsync`` (what
survives an OS crash or a power cut) runs at most once per :data:`SYNC_INTERVAL` seconds
and once at the end of the run, not per batch: an OS crash loses at most the episodes of
the last second, which a resume plays again. A re-run reads the keys already present and skips them: nothing is
run twice, nothing finished is lost. Readers deduplicate by key and sort, so exports are
deterministic whatever order the workers finished in. Every line is an
:class:`~coworkenv.trajectory.EpisodeRecord`, validated as it is read: a line that is not one
(a foreign or hand-edited file) stops the reader with its file, line and field. Resuming reads only
what it needs of each line (its :class:`Outcome` fields, :func:`read_outcomes`), so its cost is reading
the file, not validating every trajectory in it; the full record is validated where it is read back.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from coworkenv.storage import (
    append_bytes,
    append_file,
    atomic_write_json,
    json_text,
    lines_data,
    remove_orphan_folders,
    repair_jsonl,
    sync_file,
)
from coworkenv.trajectory import EpisodeRecord, EpisodeStatus

EPISODES_FILE = "episodes.jsonl"
MANIFEST_FILE = "manifest.json"
RESUME_FIELDS = ("policy", "seed", "user", "fault_rate", "bank", "split", "code")
"""Settings that must match to resume a run (``samples`` may grow; ``code``: :func:`~coworkenv.provenance.code_version`,
absent from runs that did not record it, which then resume without the check)."""
SYNC_INTERVAL = 1.0
"""Seconds between fsyncs of ``episodes.jsonl`` while a run goes on (see the module's durability rule)."""
SPOOL_PREFIX = ".spool-"
"""A run's spool folder in the store is this and the driver's pid (see :class:`Spool`)."""
RETRIED = "error"
"""The status of episodes a resumed run plays again (a dead endpoint, a crashed backend)."""


class _Ended(Protocol):
    @property
    def status(self) -> str: ...
    @property
    def score(self) -> float | None: ...
    @property
    def passed(self) -> bool: ...


def replaces(old: _Ended | None, new: _Ended) -> bool:
    """Whether ``new`` is the record a key keeps over ``old``: the first wins, but a retried error gives way."""
    return old is None or (old.status == RETRIED and new.status != RETRIED)


class SyncPolicy:
    """When an append is fsynced: when ``interval`` seconds have passed since the last fsync (see the module)."""

    def __init__(self, interval: float = SYNC_INTERVAL) -> None:
        self.interval = interval
        self.last = time.monotonic()

    def due(self) -> bool:
        if time.monotonic() - self.last < self.interval:
            return False
        self.synced()
        return True

    def synced(self) -> None:
        self.last = time.monotonic()


class StoreMismatch(ValueError):
    """A resumed run was asked for different settings than it was started with."""


class StoreFormatError(ValueError):
    """A line of ``episodes.jsonl`` is not an episode record."""


def episode_key(spec_id: str, sample: int) -> str:
    return f"{spec_id}#{sample}"


@dataclass(frozen=True)
class Outcome:
    """How an episode ended, without its trajectory: what the driver counts and resumes by."""

    key: str
    spec_id: str
    sample: int
    status: EpisodeStatus
    score: float | None
    passed: bool

    @classmethod
    def of(cls, record: EpisodeRecord) -> Outcome:
        return cls(record.key, record.spec_id, record.sample, record.status, record.score, record.passed)


@dataclass(frozen=True)
class Encoded:
    """A record already serialised (to UTF-8) by the worker, so the driver only writes bytes and counts its outcome."""

    data: bytes
    outcome: Outcome

    @property
    def line(self) -> str:
        return self.data.decode("utf-8")

    @property
    def passed(self) -> bool:
        return self.outcome.passed

    @classmethod
    def of(cls, record: EpisodeRecord) -> Encoded:
        """The record's store line: its JSON dump (:func:`~coworkenv.storage.json_text`) in UTF-8."""
        return cls(json_text(record.model_dump(mode="json")).encode("utf-8"), Outcome.of(record))


@dataclass(frozen=True)
class Spooled:
    """A batch of store lines a pool worker left in a file of the run's spool folder (:class:`Spool`), with their
    outcomes: what the worker sends back instead of the lines themselves."""

    path: str
    outcomes: tuple[Outcome, ...]


Batch = list[Encoded] | Spooled
"""Records as a worker hands them to the driver: encoded lines, or lines left in a spool file."""


def outcomes_of(batch: Batch) -> Sequence[Outcome]:
    return batch.outcomes if isinstance(batch, Spooled) else [r.outcome for r in batch]


class Spool:
    """A pool worker's side of the spool: each batch of lines into a new file of the run's spool folder.

    Lines of oracle episodes are some 17 KB each; pickled through the result pipe, every byte was copied by the
    worker, read by the driver's result thread, unpickled and joined again, all on the cores the workers need.
    From a file the driver copies them into the store inside the kernel (:func:`~coworkenv.storage.append_file`)
    and deletes the file, so the folder holds only the batches between a worker and the store."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.batches = 0

    def put(self, records: list[Encoded]) -> Spooled:
        self.batches += 1
        path = self.folder / f"{os.getpid()}-{self.batches}.jsonl"
        with open(path, "wb") as fh:
            fh.write(lines_data([r.data for r in records]))
        return Spooled(str(path), tuple(r.outcome for r in records))


class RolloutStore:
    """A run folder: ``episodes.jsonl`` and ``manifest.json``."""

    def __init__(self, root: str | Path, sync: SyncPolicy | None = None) -> None:
        self.root = Path(root)
        self.sync = sync or SyncPolicy()
        self.episodes_path = self.root / EPISODES_FILE
        self.manifest_path = self.root / MANIFEST_FILE

    def open(self, config: dict[str, object]) -> dict[str, Outcome]:
        """Prepare for appending under ``config``; returns the outcome of every episode already stored
        (the record that :meth:`records` would keep for its key)."""
        self.root.mkdir(parents=True, exist_ok=True)
        old = self.manifest().get("config", {})
        changed = [f for f in RESUME_FIELDS if f in old and old[f] != config.get(f)]
        if changed:
            raise StoreMismatch(
                f"{self.root} was started with different settings: "
                + ", ".join(f"{f}={old[f]!r} (now {config.get(f)!r})" for f in changed)
                + (
                    "; its episodes would mix two versions of coworkenv: finish it with the code that started it, "
                    "or start another run folder"
                    if "code" in changed
                    else ""
                )
            )
        repair_jsonl(self.episodes_path)
        remove_orphan_folders(self.root, SPOOL_PREFIX)
        outcomes: dict[str, Outcome] = {}
        for outcome in read_outcomes(self.episodes_path):
            if replaces(outcomes.get(outcome.key), outcome):
                outcomes[outcome.key] = outcome
        return outcomes

    def append(self, batch: Batch) -> None:
        """Append whole lines (in one write, or a spooled file's in one copy, which deletes the file); fsync as
        :class:`SyncPolicy` says (see the module's durability rule)."""
        if isinstance(batch, Spooled):
            append_file(self.episodes_path, batch.path, sync=self.sync.due())
            os.unlink(batch.path)
        else:
            append_bytes(self.episodes_path, [r.data for r in batch], sync=self.sync.due())

    @contextmanager
    def spool(self) -> Iterator[Path]:
        """A spool folder for the run's pool workers (:class:`Spool`), removed with whatever is left in it when the
        run ends; a killed run's is removed when the store is next opened."""
        folder = self.root / f"{SPOOL_PREFIX}{os.getpid()}"
        folder.mkdir(exist_ok=True)
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def flush(self) -> None:
        """Make everything appended so far durable (the end of a run)."""
        if self.episodes_path.exists():
            sync_file(self.episodes_path)
        self.sync.synced()

    def manifest(self) -> dict[str, Any]:
        if not self.manifest_path.exists():
            return {}
        manifest: dict[str, Any] = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        return manifest

    def write_manifest(self, data: dict[str, object]) -> None:
        atomic_write_json(self.manifest_path, data)

    def records(self) -> Iterator[EpisodeRecord]:
        """Every episode record once, ordered by spec id and sample.

        The first record of a key wins, except that a retried error gives way to its rerun.
        """
        seen: dict[str, EpisodeRecord] = {}
        for record in read_records(self.episodes_path):
            if replaces(seen.get(record.key), record):
                seen[record.key] = record
        yield from sorted(seen.values(), key=lambda r: (r.spec_id, r.sample))


class _OutcomeLine(BaseModel):
    """The fields of a store line that make its :class:`Outcome`; the rest of the line is skipped unvalidated."""

    model_config = ConfigDict(extra="ignore")

    key: str
    spec_id: str
    sample: int
    status: EpisodeStatus
    score: float | None
    passed: bool


def _whole_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The complete lines of a file with their numbers (from 1); a torn last line (no newline) is left out."""
    if not path.exists():
        return
    with open(path, "rb") as fh:
        for number, line in enumerate(fh, 1):
            if not line.endswith(b"\n"):
                break
            yield number, line


def _format_error(path: Path, number: int, exc: ValidationError) -> StoreFormatError:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(record)"
    return StoreFormatError(
        f"{path}:{number}: {field}: {first['msg']} (not an episode record of this coworkenv version)"
    )


def read_records(path: Path) -> Iterator[EpisodeRecord]:
    """The records of an ``episodes.jsonl``, each validated; a torn last line, or a line that is not JSON, is
    skipped."""
    for number, line in _whole_lines(path):
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        try:
            yield EpisodeRecord.model_validate(data)
        except ValidationError as exc:
            raise _format_error(path, number, exc) from None


def read_outcomes(path: Path) -> Iterator[Outcome]:
    """The outcome of every line of an ``episodes.jsonl``, in file order, skipping what :func:`read_records`
    skips; a line whose outcome fields are not valid stops it as :func:`read_records` would."""
    for number, line in _whole_lines(path):
        try:
            o = _OutcomeLine.model_validate_json(line)
        except ValidationError as exc:
            if exc.errors()[0]["type"] == "json_invalid":
                continue
            raise _format_error(path, number, exc) from None
        yield Outcome(o.key, o.spec_id, o.sample, o.status, o.score, o.passed)


def iter_episodes(
    runs: str | Path | list[str | Path], *, status: EpisodeStatus | None = "ok"
) -> Iterator[EpisodeRecord]:
    """Episode records of one or more run folders (``status=None`` keeps every status)."""
    for run in [runs] if isinstance(runs, str | Path) else runs:
        for record in RolloutStore(run).records():
            if status is None or record.status == status:
                yield record


def counts(records: Iterable[_Ended]) -> dict[str, object]:
    """Headline figures of a set of episode records (or their :class:`Outcome`), for manifests and summaries."""
    records = list(records)
    by_status: dict[str, int] = {}
    for r in records:
        by_status[r.status] = by_status.get(r.status, 0) + 1
    scored = [r.score for r in records if r.score is not None]
    return {
        "episodes": len(records),
        "by_status": dict(sorted(by_status.items())),
        "passed": sum(1 for r in records if r.passed),
        "mean_score": round(sum(scored) / len(scored), 6) if scored else None,
    }
