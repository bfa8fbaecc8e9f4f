"""The public Python API: coworkenv.make, the typed observation, and the README block that shows it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import coworkenv
from coworkenv.agents import OracleTeacher

ROOT = Path(__file__).parent.parent
SPEC = ROOT / "examples" / "external_quote_confirmation.yaml"


def test_readme_python_block_runs_as_written() -> None:
    readme = (ROOT / "README.md").read_text()
    code = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "coworkenv.make(" in b)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Kenji" in out.stdout and "False" in out.stdout


def test_observation_reward_done_info_follow_the_grade() -> None:
    env = coworkenv.make(SPEC)
    obs = env.reset()
    assert isinstance(obs, coworkenv.Observation) and not obs.done and obs.step == 0
    assert obs.reward == env.grade().score < 0.75 and "grade" not in obs.info
    traj = coworkenv.run_episode(env, OracleTeacher())
    last = env.step("anything else?")  # a step after the end changes nothing and still reports the end
    assert last.done and last.messages == [] and last.reward == traj.grade.score == 1.0
    assert last.info["grade"]["passed"] and last.info["done_reason"] == traj.done_reason


def test_make_accepts_spec_data_folder_and_bank_shorthand() -> None:
    spec = coworkenv.load_spec(SPEC)
    assert coworkenv.make(spec).spec is spec
    assert coworkenv.make(spec.model_dump(mode="json")).spec == spec
    assert coworkenv.make(ROOT / "examples", env_id=spec.id).spec == spec
    assert coworkenv.make(f"{ROOT / 'examples'}::{spec.id}").spec == spec
    count = len(list((ROOT / "examples").glob("*.yaml")))
    with pytest.raises(ValueError, match=f"{count} environments; pass env_id"):
        coworkenv.make(ROOT / "examples")
    with pytest.raises(KeyError, match="unknown environment 'nope'"):
        coworkenv.make(ROOT / "examples", env_id="nope")
    with pytest.raises(AttributeError):
        coworkenv.no_such_name  # noqa: B018


def test_grading_mid_episode_does_not_freeze_the_final_grade() -> None:
    """A grade taken before the end (the reward so far) must not be served as the final grade."""
    env = coworkenv.Environment(coworkenv.load_spec(SPEC))
    before = {c.id: c.passed for c in env.grade().checks}
    env.step("I have emailed Kenji Watanabe the final Q2 renewal quote (86,400 USD per year).")
    after = {c.id: c.passed for c in env.grade().checks}
    assert env.done and not before["reported"] and after["reported"]
