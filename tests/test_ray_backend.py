"""The Ray backend on a local two-CPU Ray: same records as a local run, and resumable."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from coworkenv.rollout import rollout_bank
from rollout_specs import mail_reply_spec, store_outcomes

ray = pytest.importorskip("ray")

SPECS = [mail_reply_spec(i) for i in range(5)]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_matches_local_and_resumes(local_ray: None, tmp_path: Path) -> None:
    rollout_bank(SPECS, "oracle", 2, tmp_path / "local", progress=False)
    first = rollout_bank(
        SPECS[:3], "oracle", 2, tmp_path / "ray", workers=2, ray_address="local", chunk_size=2, progress=False
    )
    assert first.ran == 6 and first.counts["passed"] == 6
    resumed = rollout_bank(SPECS, "oracle", 2, tmp_path / "ray", workers=2, ray_address="local", progress=False)
    assert (resumed.skipped, resumed.ran) == (6, 4)
    assert store_outcomes(tmp_path / "ray") == store_outcomes(tmp_path / "local")
    assert len((tmp_path / "ray" / "episodes.jsonl").read_text().splitlines()) == 10
