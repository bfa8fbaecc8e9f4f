"""The async face of an environment, written once for every environment class.

Steps are pure Python and fast, so the async methods run the sync ones; ``astep`` yields to
the event loop first, so many episodes driven from one loop interleave turn by turn.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import Generic, TypeVar

from coworkenv.trajectory import Grade

Obs = TypeVar("Obs")


class AsyncMethods(ABC, Generic[Obs]):
    """``areset``/``astep``/``agrade`` for a class that has ``reset``/``step``/``grade``."""

    @abstractmethod
    def reset(self) -> Obs: ...

    @abstractmethod
    def step(self, turn: object) -> Obs: ...

    @abstractmethod
    def grade(self) -> Grade: ...

    async def areset(self) -> Obs:
        return self.reset()

    async def astep(self, turn: object) -> Obs:
        await asyncio.sleep(0)
        return self.step(turn)

    async def agrade(self) -> Grade:
        return self.grade()
