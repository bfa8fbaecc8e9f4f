"""The resumable rollout store: one JSONL line per finished episode, plus a manifest.

Episodes are keyed by ``(spec_id, sample)``. Only the driver process writes; each record
is appended whole and fsynced, so a SIGKILL leaves at most one torn last line, which is
truncated on reopen. A re-run reads the keys already present and skips them: nothing is
run twice, nothing finished is lost. Readers deduplicate by key and sort, so exports are
deterministic whatever order the workers finished in. Every line is an
:class:`~coworkenv.trajectory.EpisodeRecord`, validated as it is read: a line that is not one
(a foreign or hand-edited file) stops the reader with its file, line and field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from coworkenv.storage import append_lines, atomic_write_json, json_text, read_jsonl_numbered, repair_jsonl
from coworkenv.trajectory import EpisodeRecord, EpisodeStatus

EPISODES_FILE = "episodes.jsonl"
MANIFEST_FILE = "manifest.json"
RESUME_FIELDS = ("policy", "seed", "user", "fault_rate", "bank", "split")
"""Settings that must match to resume a run (``samples`` may grow)."""
RETRIED = "error"
"""The status of episodes a resumed run plays again (a dead endpoint, a crashed backend)."""


class StoreMismatch(ValueError):
    """A resumed run was asked for different settings than it was started with."""


class StoreFormatError(ValueError):
    """A line of ``episodes.jsonl`` is not an episode record."""


def episode_key(spec_id: str, sample: int) -> str:
    return f"{spec_id}#{sample}"


@dataclass(frozen=True)
class Encoded:
    """A record already serialised by the worker, so the driver only writes bytes."""

    line: str
    passed: bool

    @classmethod
    def of(cls, record: EpisodeRecord) -> Encoded:
        return cls(json_text(record.model_dump(mode="json")), record.passed)


class RolloutStore:
    """A run folder: ``episodes.jsonl`` and ``manifest.json``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.episodes_path = self.root / EPISODES_FILE
        self.manifest_path = self.root / MANIFEST_FILE

    def open(self, config: dict[str, Any]) -> set[str]:
        """Prepare for appending under ``config``; returns the keys already done."""
        self.root.mkdir(parents=True, exist_ok=True)
        old = self.manifest().get("config", {})
        changed = [f for f in RESUME_FIELDS if f in old and old[f] != config.get(f)]
        if changed:
            raise StoreMismatch(
                f"{self.root} was started with different settings: "
                + ", ".join(f"{f}={old[f]!r} (now {config.get(f)!r})" for f in changed)
            )
        repair_jsonl(self.episodes_path)
        return {r.key for r in self.records() if r.status != RETRIED}

    def append(self, records: list[Encoded]) -> None:
        """Append whole lines and fsync: a crash leaves at most one torn last line."""
        append_lines(self.episodes_path, [r.line for r in records])

    def manifest(self) -> dict[str, Any]:
        if not self.manifest_path.exists():
            return {}
        return json.loads(self.manifest_path.read_text(encoding="utf-8"))

    def write_manifest(self, data: dict[str, Any]) -> None:
        atomic_write_json(self.manifest_path, data)

    def records(self) -> Iterator[EpisodeRecord]:
        """Every episode record once, ordered by spec id and sample.

        The first record of a key wins, except that a retried error gives way to its rerun.
        """
        seen: dict[str, EpisodeRecord] = {}
        for record in read_records(self.episodes_path):
            old = seen.get(record.key)
            if old is None or (old.status == RETRIED and record.status != RETRIED):
                seen[record.key] = record
        yield from sorted(seen.values(), key=lambda r: (r.spec_id, r.sample))


def read_records(path: Path) -> Iterator[EpisodeRecord]:
    """The records of an ``episodes.jsonl``, each validated; a torn last line is skipped."""
    for number, data in read_jsonl_numbered(path):
        try:
            yield EpisodeRecord.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "(record)"
            raise StoreFormatError(
                f"{path}:{number}: {field}: {first['msg']} (not an episode record of this coworkenv version)"
            ) from None


def iter_episodes(
    runs: str | Path | list[str | Path], *, status: EpisodeStatus | None = "ok"
) -> Iterator[EpisodeRecord]:
    """Episode records of one or more run folders (``status=None`` keeps every status)."""
    for run in [runs] if isinstance(runs, str | Path) else runs:
        for record in RolloutStore(run).records():
            if status is None or record.status == status:
                yield record


def counts(records: list[EpisodeRecord]) -> dict[str, Any]:
    """Headline figures of a set of episode records, for manifests and summaries."""
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
