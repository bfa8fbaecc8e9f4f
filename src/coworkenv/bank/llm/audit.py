"""The audit trail: every prompt, reply, finding and decision of one job, by round.

Stored compressed beside the bank as ``audit/<index>.json.gz`` (gzip with a zero mtime,
sorted keys: the same job gives the same bytes). Written before the journal names the
job, so a job that is rerun after a kill simply overwrites its trail.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coworkenv.storage import atomic_write_bytes


def audit_path(bank: str | Path, index: int) -> Path:
    return Path(bank) / "audit" / f"{index:07d}.json.gz"


def write_audit(bank: str | Path, index: int, trail: Mapping[str, object]) -> None:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as gz:
        gz.write(json.dumps(trail, ensure_ascii=False, sort_keys=True, indent=1).encode())
    atomic_write_bytes(audit_path(bank, index), buf.getvalue())


def read_audit(bank: str | Path, index: int) -> dict[str, Any]:
    """The trail of job ``index`` of a bank."""
    trail: dict[str, Any] = json.loads(gzip.decompress(audit_path(bank, index).read_bytes()))
    return trail
