"""``coworkenv eval --env-server``: the same specs and seed give the same evaluation on a real server."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from coworkenv.cli import app
from coworkenv.interop.catalog import Catalog
from coworkenv.interop.client import EnvClient
from coworkenv.interop.http_server import create_app, running

EXAMPLES = Path(__file__).parent.parent / "examples"


def _eval(out: Path, model: str, *extra: str) -> dict:
    args = ["eval", "--model", model, "--bank", str(EXAMPLES), "--split", "all", "--seed", "5"]
    result = CliRunner().invoke(app, [*args, "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return json.loads((out / "metrics.json").read_text())["metrics"]


def _outcomes(out: Path) -> list[tuple]:
    lines = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]
    return [(t["spec_id"], t["seed"], t["final_state_hash"], t["grade"]["score"], t["messages"]) for t in lines]


def test_eval_against_a_server_equals_the_local_run(tmp_path: Path) -> None:
    with running(create_app(Catalog.load([EXAMPLES]))) as url:
        for model in ("oracle", "probe:answer_without_acting"):
            local = _eval(tmp_path / f"local_{model}", model)
            remote = _eval(tmp_path / f"remote_{model}", model, "--env-server", url)
            assert remote == local
            assert _outcomes(tmp_path / f"remote_{model}") == _outcomes(tmp_path / f"local_{model}")
        assert EnvClient(url).health()["sessions"] == 0  # every session was closed
    assert local["overall"]["tasks"] == len(list(EXAMPLES.glob("*.yaml")))
    assert local["overall"]["pass@1"] == 0.0  # the probe fails, the oracle passed
    meta = json.loads((tmp_path / "remote_oracle" / "metrics.json").read_text())
    assert meta["metrics"]["overall"]["pass@1"] == 100.0 and meta["env_server"] == url


def test_eval_with_an_unreachable_server_exits_2_and_says_why(tmp_path: Path) -> None:
    args = ["eval", "--model", "oracle", "--bank", str(EXAMPLES), "--split", "all", "--out", str(tmp_path / "x")]
    result = CliRunner().invoke(app, [*args, "--env-server", "http://127.0.0.1:9"])
    assert result.exit_code == 2 and "--env-server http://127.0.0.1:9" in result.output
    assert not (tmp_path / "x" / "metrics.json").exists()
