"""Atomic file writes and append-only JSONL, shared by every stage that writes outputs.

Text from models can hold lone surrogates (``"\\ud800"``, which OpenAI-style servers send),
which UTF-8 cannot encode: :func:`json_text` escapes such a document instead of failing the
write. Atomic writes create files with the ordinary mode (``0666`` less the umask), and a
write that fails or is interrupted removes its temporary file; one killed outright (SIGKILL)
leaves it behind, and the next write of the same file removes it.
"""

from __future__ import annotations

import errno
import glob
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO


def json_text(data: object, *, indent: int | None = None, sort_keys: bool = True) -> str:
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


def _left_by_the_dead(pid: str) -> bool:
    """Whether a file or folder named after the writer ``pid`` was left by another process that has ended."""
    return pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid))


def remove_orphan_folders(folder: Path, prefix: str) -> None:
    """Delete the folders ``<prefix><pid>`` in ``folder`` that writers killed before their cleanup left behind
    (a live writer's folder is never touched)."""
    for leftover in folder.glob(f"{glob.escape(prefix)}*"):
        pid = leftover.name[len(prefix) :]
        if leftover.is_dir() and _left_by_the_dead(pid):
            shutil.rmtree(leftover, ignore_errors=True)


def remove_orphan_tmp(path: Path) -> None:
    """Delete temporary files of ``path`` left by writers that were killed (SIGKILL skips cleanup).

    Their names carry the writer's pid, so a live writer's file is never touched.
    """
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        pid = tmp.name[len(path.name) + 2 :].split(".", 1)[0]
        if _left_by_the_dead(pid):
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


def atomic_write_json(path: str | Path, data: object) -> None:
    atomic_write_text(path, json_text(data, indent=2) + "\n")


def append_jsonl(path: str | Path, records: Sequence[Mapping[str, object]]) -> None:
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
        start = fh.tell()
        fh.write(lines_data(lines))
        fh.flush()
        if sync:
            os.fsync(fh.fileno())
        else:
            start_writeback(fh.fileno(), start, fh.tell() - start)


def lines_data(lines: list[bytes]) -> bytes:
    """Lines (without their newlines) as the bytes that appending them writes: each one ended by a newline."""
    return b"\n".join([*lines, b""])


def append_file(path: str | Path, source: str | Path, *, sync: bool = True) -> None:
    """Append the whole of ``source`` (whole lines another process wrote, see :func:`lines_data`) to ``path``
    without reading it into this process: the kernel copies the bytes (``copy_file_range``; reads and writes
    where the platform or the file systems cannot). A failure part way leaves at most a torn last line, which
    :func:`repair_jsonl` cuts off, as after an interrupted :func:`append_bytes`."""
    with open(source, "rb") as src:
        length = os.fstat(src.fileno()).st_size
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o666)  # not O_APPEND: copy_file_range refuses it
        try:
            end = os.fstat(fd).st_size
            copied = _copy_range(src.fileno(), fd, length, end)
            if copied < length:
                _copy_by_reading(src, fd, copied, length - copied, end + copied)
            if sync:
                os.fsync(fd)
            else:
                start_writeback(fd, end, length)
        finally:
            os.close(fd)


@cache
def _sync_file_range() -> Callable[[int, int, int, int], int] | None:
    """Linux's ``sync_file_range`` (None elsewhere: Python's ``os`` does not expose it), looked up when first
    needed (``ctypes`` costs a command's start-up some milliseconds)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        fn = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return None
    fn.argtypes = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint)
    return fn


_SYNC_FILE_RANGE_WRITE = 2


def start_writeback(fd: int, offset: int, length: int) -> None:
    """Have the kernel start writing ``length`` bytes at ``offset`` of ``fd`` to disk without waiting for it, so
    that the next fsync waits only for what is still in flight (an appender that fsyncs once a second would
    otherwise stall on a second's worth of writes each time, and at the end of its run). Does nothing where the
    platform has no ``sync_file_range``: then the fsync does all the writing."""
    sync_file_range = _sync_file_range()
    if sync_file_range is not None and length > 0:
        sync_file_range(fd, offset, length, _SYNC_FILE_RANGE_WRITE)


def _copy_range(src: int, dst: int, length: int, at: int) -> int:
    """Bytes copied from the start of ``src`` to offset ``at`` of ``dst`` by ``copy_file_range`` (0 where the
    kernel or the file systems do not support it)."""
    copy = getattr(os, "copy_file_range", None)
    done = 0
    while copy is not None and done < length:
        try:
            n = copy(src, dst, length - done, done, at + done)
        except OSError as exc:
            if exc.errno in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP) and not done:
                return 0
            raise
        if n == 0:  # the source ended early: it is not the file it was a moment ago
            raise OSError(errno.EIO, f"{length - done} bytes missing at the end of the copied file")
        done += n
    return done


def _copy_by_reading(src: BinaryIO, dst: int, start: int, length: int, at: int) -> None:
    """The rest of :func:`append_file` through this process's memory, a megabyte at a time."""
    src.seek(start)
    os.lseek(dst, at, os.SEEK_SET)
    while length > 0:
        data = src.read(min(length, 1 << 20))
        if not data:
            raise OSError(errno.EIO, f"{length} bytes missing at the end of the copied file")
        view = memoryview(data)
        while view:
            view = view[os.write(dst, view) :]
        length -= len(data)


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
    with open(path, "r+b") as fh:  # reads back from the end only as far as the last newline, not the whole file
        end = fh.seek(0, os.SEEK_END)
        at = end
        while at > 0:
            start = max(0, at - (1 << 16))
            fh.seek(start)
            block = fh.read(at - start)
            if (i := block.rfind(b"\n")) >= 0:
                at = start + i + 1
                break
            at = start
        if at < end:
            fh.truncate(at)
