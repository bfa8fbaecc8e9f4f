"""Atomic file writes and append-only JSONL, shared by every stage that writes outputs.

Text from models can hold lone surrogates (``"\\ud800"``, which OpenAI-style servers send),
which UTF-8 cannot encode: :func:`json_text` escapes such a document instead of failing the
write. Atomic writes create files with the ordinary mode (``0666`` less the umask), and a
write that fails or is interrupted removes its temporary file; one killed outright (SIGKILL)
leaves it behind, and the next write of the same file removes it.
"""

from __future__ import annotations

import glob
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def json_text(data: Any, *, indent: int | None = None, sort_keys: bool = True) -> str:
    """JSON that keeps non-ASCII text readable, escaped only when it holds lone surrogates."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=sort_keys, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, ensure_ascii=True, sort_keys=sort_keys, indent=indent)
    return text


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def remove_orphan_tmp(path: Path) -> None:
    """Delete temporary files of ``path`` left by writers that were killed (SIGKILL skips cleanup).

    Their names carry the writer's pid, so a live writer's file is never touched.
    """
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        pid = tmp.name[len(path.name) + 2 :].split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write via a temporary file in the same folder and rename: readers never see half a file."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """:func:`atomic_write_text` for bytes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_orphan_tmp(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; outputs are ordinary files
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_json(path: str | Path, data: Any) -> None:
    atomic_write_text(path, json_text(data, indent=2) + "\n")


def append_jsonl(path: str | Path, records: list[dict[str, Any]]) -> None:
    """Append records as whole JSON lines and fsync; a crash can leave at most one torn last line."""
    append_lines(path, [json_text(r) for r in records])


def append_lines(path: str | Path, lines: list[str], *, sync: bool = True) -> None:
    """Append already-serialised lines in one write and (``sync``) fsync them."""
    append_bytes(path, [line.encode("utf-8") for line in lines], sync=sync)


def append_bytes(path: str | Path, lines: list[bytes], *, sync: bool = True) -> None:
    """Append UTF-8 lines (without their newlines) in one write and (``sync``) fsync them: the one place that
    appends. Lines are encoded one by one (by the caller, or a worker): an ASCII line encodes at memory speed,
    while one joined text with a single non-ASCII character is encoded character by character."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as fh:
        fh.write(b"\n".join([*lines, b""]))
        fh.flush()
        if sync:
            os.fsync(fh.fileno())


def sync_file(path: str | Path) -> None:
    """fsync a file written earlier without syncing."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield complete records; a torn final line (from a crash mid-write) is skipped."""
    for _, record in read_jsonl_numbered(path):
        yield record


def read_jsonl_numbered(path: str | Path) -> Iterator[tuple[int, Any]]:
    """:func:`read_jsonl` with each record's line number (from 1), for error messages."""
    path = Path(path)
    if not path.exists():
        return
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.endswith("\n"):
                break
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError:
                continue


def repair_jsonl(path: str | Path) -> None:
    """Truncate a torn final line so the next append starts on a clean line."""
    path = Path(path)
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        with open(path, "r+b") as fh:
            fh.truncate(cut)
