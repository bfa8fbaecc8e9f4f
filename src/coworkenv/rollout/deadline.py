"""An episode's time budget, enforced around its policy calls.

Policy calls are the slow part (the environment is pure Python and fast), so the budget is
enforced around them: a call that starts after the deadline raises at once, and a call
still running at the deadline is interrupted by SIGALRM (main thread only; elsewhere the
deadline is checked between calls). Either way the episode ends, keeps its partial
trajectory and is recorded with status ``timeout`` rather than lost.

Used as a context manager around a whole episode, a :class:`Deadline` installs its handler
and arms the timer once for the episode; a signal that comes between policy calls (while the
environment steps) only marks the budget spent, and the next call raises. Called outside
one, it arms the timer around each call. Both end the same episodes the same way.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any

from coworkenv.runtime.turn import AssistantTurn


class EpisodeTimeout(Exception):
    """The episode's time budget ran out."""


class _Alarm(BaseException):
    """Raised by SIGALRM inside a policy call: a BaseException so that client libraries'
    ``except Exception`` (the OpenAI SDK turns those into retryable connection errors)
    cannot swallow it; :class:`Deadline` turns it into an EpisodeTimeout."""


def _can_alarm() -> bool:
    return threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")


@contextmanager
def alarm(seconds: float) -> Iterator[None]:
    """Interrupt the main thread after ``seconds``; a no-op elsewhere."""
    if not _can_alarm():
        yield
        return

    def _fire(signum: int, frame: object) -> None:
        raise _Alarm

    previous = signal.signal(signal.SIGALRM, _fire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Deadline:
    """Wraps a policy call (``act`` or ``act_batch``) with the episode's deadline."""

    def __init__(self, call: Callable[..., Any], timeout: float | None, name: str) -> None:
        self.call = call
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.name = name
        self.expired = False
        """Set when the budget ran out: the episode's error is then a timeout, whatever its text."""
        self._armed = False
        self._in_call = False
        self._previous: Callable[[int, FrameType | None], object] | int | signal.Handlers | None = None

    def __enter__(self) -> Deadline:
        """Arm the timer for the rest of the episode (main thread only; elsewhere calls are checked as they start)."""
        if self.deadline is not None and _can_alarm():
            self._previous = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, max(self.deadline - time.monotonic(), 1e-3))
            self._armed = True
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)
            self._armed = False

    def _fire(self, signum: int, frame: object) -> None:
        if self._in_call:
            raise _Alarm
        self.expired = True  # between calls: the environment's step finishes, the next call raises

    def __call__(self, *args: Any) -> Any:
        if self.deadline is None:
            return self.call(*args)
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.expired = True
            raise EpisodeTimeout("episode exceeded its time budget")
        try:
            if self._armed:
                self._in_call = True
                try:
                    return self.call(*args)
                finally:
                    self._in_call = False
            with alarm(left):
                return self.call(*args)
        except _Alarm:
            self.expired = True
            raise EpisodeTimeout(f"episode exceeded its time budget (interrupted after {left:.1f}s)") from None

    def act(self, messages: list[dict[str, object]], tools: list[dict[str, object]]) -> AssistantTurn:
        turn: AssistantTurn = self(messages, tools)
        return turn
