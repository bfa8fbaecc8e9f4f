"""Every `coworkenv` command the README shows runs as written, in order, from a clean folder.

Only sizes shrink (fewer environments, samples and steps) so the walk takes a minute, and two
things that need what a test can't have are swapped: the `embedded` model (a download) for
`tiny`, and OpenAI-compatible endpoints for a local fake server. A README command added later
is walked automatically; one that fails fails this test.
"""

from __future__ import annotations

import glob
import re
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).parent.parent

pytest.importorskip("torch")
pytest.importorskip("openai")
pytest.importorskip("ray")

SHRINK: list[tuple[str, str]] = [
    (r"--n 1000\b", "--n 8"),
    (r"--ray local\b", "--ray local --workers 1"),
    (r"--samples 4\b", "--samples 2"),
    (r"-k 8\b", "-k 2"),
    (r"--workers 8\b", "--workers 2"),
    (r"--model embedded\b", "--model tiny"),
    (r"--concurrency 8\b", "--concurrency 2"),
]
EXTRA: dict[str, list[str]] = {
    "quickstart": ["--n", "12"],
    "train sft": ["--max-steps", "1", "--batch-size", "2", "--device", "cpu"],
    "train grpo": [
        "--steps",
        "1",
        "--envs-per-step",
        "1",
        "--group-size",
        "2",
        "--max-new-tokens",
        "8",
        "--max-turns",
        "2",
        "--device",
        "cpu",
    ],
    "eval": ["--max-new-tokens", "8", "--device", "cpu"],
}


CLAW_SAMPLE = ROOT.parent / "shared" / "claw-eval-sample"
SKIPPED: dict[str, str] = {
    "coworkenv serve ": "a server runs until stopped (tests/test_http_server.py and test_mcp_server.py start it)",
    "--env-server": "needs a running `coworkenv serve http` (tested with the server)",
    "synth --llm": "needs a model that writes specs (tests/test_llm_synth.py scripts one on loopback)",
    "llm-bank": "made by it",
}
if not CLAW_SAMPLE.is_dir():
    SKIPPED |= {"claw-eval-sample": "the Claw-Eval sample is not in this checkout", "claw_specs": "made from it"}


def skipped(command: str) -> bool:
    return any(key in command for key in SKIPPED)


def readme_commands() -> list[str]:
    """The `coworkenv …` lines of the README's bash blocks, without comments and [optional] parts."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [block.replace("\\\n", " ") for block in re.findall(r"```bash\n(.*?)```", text, re.S)]
    lines = [line for block in blocks for line in block.splitlines()]
    commands = []
    for line in lines:
        line = re.sub(r"\s+#.*$", "", line)
        line = re.sub(r"\[[^\]]*\]", "", line).strip()
        if line.startswith("coworkenv "):
            commands.append(line)
    return commands


def concrete(command: str, url: str) -> list[str]:
    for pattern, repl in SHRINK:
        command = re.sub(pattern, repl, command)
    command = re.sub(r"openai:([^@\s]+)@\S+", rf"openai:\1@{url}", command)
    command = command.replace("examples/X.yaml", "examples/expense_over_limit_approval.yaml")
    command = command.replace("BANK", "bank").replace("../shared/", f"{ROOT.parent}/shared/")
    args = shlex.split(command)[1:]
    expanded = [p for a in args for p in (sorted(glob.glob(a)) if "*" in a else [a])]
    for prefix, extra in EXTRA.items():
        if " ".join(expanded).startswith(prefix):
            expanded += extra
    return expanded


def test_readme_lists_the_commands_of_every_stage() -> None:
    names = {
        " ".join(c.split()[1:3]) if c.split()[1] in ("export", "train", "bank") else c.split()[1]
        for c in readme_commands()
    }
    assert {
        "--version",
        "schema",
        "validate",
        "run",
        "quickstart",
        "synth",
        "bank stats",
        "rollout",
        "export sft",
        "export rl",
        "train sft",
        "train grpo",
        "eval",
        "report",
    } <= names


def test_every_readme_command_works_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from coworkenv.cli import app
    from test_openai_policy import FakeServer, Reply, completion

    server = FakeServer()
    server.script(Reply(body=completion({"content": "Done: everything you asked for is handled."})))
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    try:
        for command in [c for c in readme_commands() if not skipped(c)]:
            args = concrete(command, server.url)
            result = runner.invoke(app, args)
            assert result.exit_code == 0, f"{command}\n  ran as: {' '.join(args)}\n{result.output}\n{result.exception}"
    finally:
        server.httpd.shutdown()
    assert (tmp_path / "ckpt" / "rl").is_dir() and (tmp_path / "runs" / "eval" / "report.html").is_file()
