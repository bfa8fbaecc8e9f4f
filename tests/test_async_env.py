"""The async methods (written once, for the runtime Environment and the typed Env) play like the sync ones."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from coworkenv.agents.oracle import OracleTeacher
from coworkenv.interop.env import Env
from coworkenv.runtime import Environment
from coworkenv.spec import load_spec

SPECS = [load_spec(p) for p in sorted(Path(__file__).parent.parent.joinpath("examples").glob("*.yaml"))[:3]]


async def _play(env: Any) -> tuple[float, str]:
    obs = await env.areset()
    actor = OracleTeacher().for_task(env.spec)
    while not obs.done:
        obs = await env.astep(actor.act(list(env.messages), obs.tools))
    grade = await env.agrade()
    return grade.score, env.trajectory().final_state_hash


@pytest.mark.parametrize("kind", [Environment, Env])
def test_interleaved_async_episodes_match_sync_ones(kind: type) -> None:
    async def all_at_once() -> list[tuple[float, str]]:
        return await asyncio.gather(*(_play(kind(s)) for s in SPECS))

    interleaved = asyncio.run(all_at_once())
    one_by_one = [asyncio.run(_play(kind(s))) for s in SPECS]
    assert interleaved == one_by_one and all(score == 1.0 for score, _ in interleaved)
