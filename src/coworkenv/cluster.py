"""Ray for the stages that can run on a cluster: joining one, a set of actors, and feeding them in order.

Ray is an optional extra (``coworkenv[ray]``), imported inside these functions so that the core
and the CLI run without it. ``address`` is what ``--ray`` takes: ``local`` starts Ray on this
machine, ``auto`` joins the cluster this machine belongs to, ``HOST:PORT`` or ``ray://HOST:PORT``
one elsewhere (its port is tried first, so an unreachable cluster is a quick, clear error rather
than Ray's long retries).
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

Item = TypeVar("Item")
Handle = TypeVar("Handle")

ADDRESS_FORMS = "local, auto, HOST:PORT or ray://HOST:PORT"
REACH_TIMEOUT = 5.0


class ClusterError(RuntimeError):
    """Ray is missing, or the cluster named cannot be reached."""


def _endpoint(address: str) -> tuple[str, int]:
    """The host and port of a cluster address (``HOST:PORT`` or ``ray://HOST:PORT``)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ClusterError(f"--ray: expected {ADDRESS_FORMS}, got {address!r}")
    return host.strip("[]"), int(port)


def check_address(address: str) -> None:
    """A :class:`ClusterError` unless ``address`` is ``local``, ``auto`` or a cluster whose port answers."""
    if address in ("local", "auto"):
        return
    host, port = _endpoint(address)
    try:
        socket.create_connection((host, port), timeout=REACH_TIMEOUT).close()
    except OSError as exc:
        raise ClusterError(
            f"cannot reach a Ray cluster at {address!r} ({exc.strerror or exc}); use --ray local to start Ray on "
            "this machine"
        ) from None


def connect(address: str, cpus: int | None = None) -> None:
    """Join (or start, for ``local``, with ``cpus`` CPUs: all when None) the Ray cluster at ``address``.

    A process already connected keeps its cluster; the address is still checked, so a bad one is
    reported either way.
    """
    check_address(address)
    try:
        import ray
    except ImportError:
        raise ClusterError("--ray needs Ray: pip install 'coworkenv[ray]'") from None
    if ray.is_initialized():
        return
    local = address == "local"
    try:
        ray.init(
            address=None if local else address,
            num_cpus=cpus if local else None,
            include_dashboard=False,
            log_to_driver=False,
        )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ClusterError(
            f"cannot reach a Ray cluster at {address!r} ({str(exc).splitlines()[0][:200]}); "
            "use --ray local to start Ray on this machine"
        ) from None


def cluster_cpus() -> int:
    """The CPUs of the connected cluster (one at least)."""
    # lazy: an optional extra (ray); bank building and the CLI run without it
    import ray

    return max(1, int(ray.available_resources().get("CPU", 1)))


@contextmanager
def actors(cls: type, count: int, *args: object) -> Iterator[list[Any]]:
    """``count`` actors of ``cls`` (one CPU each) built with ``args``; killed on leaving, whatever happened."""
    # lazy: an optional extra (ray); bank building and the CLI run without it
    import ray

    remote: Any = ray.remote(num_cpus=1)(cls)  # ray types a remote class's handle as the class itself
    handles = [remote.remote(*args) for _ in range(count)]
    try:
        yield handles
    finally:
        for handle in handles:
            ray.kill(handle)


def ordered_map(
    handles: list[Handle], call: Callable[[Handle, Item], object], items: Iterable[Item], depth: int = 2
) -> Iterator[Any]:
    """``call(actor, item)`` (a Ray method call) for each item, results in the items' order.

    Each actor has up to ``depth`` items queued, and takes the next one as soon as one of its own
    finishes, so a slow item holds back only the order of the results, never the other actors.
    ``items`` may be endless: it is read only as actors free up. A failed call raises here in its turn, so a
    consumer that stops before it never sees it.
    """
    # lazy: an optional extra (ray); bank building and the CLI run without it
    import ray

    source = iter(items)
    running: dict[Any, tuple[int, int]] = {}  # object ref -> (item number, actor's slot)
    finished: dict[int, Any] = {}  # item number -> its finished object ref
    queued = dict.fromkeys(range(len(handles)), 0)
    submitted = emitted = 0
    exhausted = False
    while True:
        for slot, handle in enumerate(handles):
            while not exhausted and queued[slot] < depth:
                try:
                    item = next(source)
                except StopIteration:
                    exhausted = True
                    break
                running[call(handle, item)] = (submitted, slot)
                queued[slot] += 1
                submitted += 1
        if not running:
            return
        ready, _ = ray.wait(list(running), num_returns=1)
        for ref in ready:
            number, slot = running.pop(ref)
            queued[slot] -= 1
            finished[number] = ref
        while emitted in finished:
            yield ray.get(finished.pop(emitted))  # a failure is raised in its turn, only if that item is reached
            emitted += 1
