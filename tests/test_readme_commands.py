"""Every command the README and the docs pages show runs as written, page by page, from a clean folder.

A page's ``bash`` blocks hold `coworkenv …` lines, run in order in a fresh folder holding a copy of
``examples/``; its ``python`` blocks run as scripts there, after the commands before them, and a block
with a ``title="path"`` is written to that file first (the spec a tutorial then validates). A block
that cannot run in a test (a server that runs until stopped, a GPU job, ``make``) is preceded by
``<!-- not run: reason -->``; any other line in a bash block fails the test, so a command added to a
page later is either run or marked. Only sizes shrink (fewer environments, samples and steps), and two
things a test can't have are swapped: the `embedded` model (a download) for `tiny`, and
OpenAI-compatible endpoints for a local fake server.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

SHRINK: list[tuple[str, str]] = [
    (r"--n \d+\b", "--n 8"),
    (r"--ray local\b", "--ray local --workers 1"),
    (r"--samples 4\b", "--samples 2"),
    (r"-k 8\b", "-k 2"),
    (r"--workers 8\b", "--workers 2"),
    (r"--model embedded\b", "--model tiny"),
    (r"--concurrency 8\b", "--concurrency 2"),
    (r"--device cuda\b", "--device cpu"),
    (r"--grid default\b", "--grid grpo/broadcast,none/checks"),
]
EXTRA: dict[str, list[str]] = {
    "quickstart": ["--n", "12"],
    "train sft": ["--max-steps", "1", "--batch-size", "2", "--device", "cpu"],
    "train grpo": [
        *("--steps", "1", "--envs-per-step", "1", "--group-size", "2"),
        *("--max-new-tokens", "8", "--max-turns", "2", "--device", "cpu"),
    ],
    "eval": ["--max-new-tokens", "8", "--device", "cpu"],
}
CLAW_SAMPLE = ROOT.parent / "shared" / "claw-eval-sample"
BLOCK = re.compile(r"(<!-- not run: [^>]+-->\s*\n\s*)?```(\w+)([^\n]*)\n(.*?)```", re.S)
TITLE = re.compile(r'title="([^"]+)"')
SHELLS = frozenset({"sh", "shell", "console", "zsh", "shell-session"})


@dataclass
class Block:
    """One fenced block of a page: its language, its title (a file it writes), its text, why it is not run."""

    lang: str
    title: str | None
    text: str
    not_run: str | None


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = BLOCK.findall(text)
    return [
        Block(lang, (TITLE.findall(info) or [None])[0], body, mark.strip() or None) for mark, lang, info, body in found
    ]


def commands(block: Block) -> list[str]:
    """The command lines of a bash block, without comments, `\\` continuations and [optional] parts."""
    lines = []
    for line in block.text.replace("\\\n", " ").splitlines():
        line = re.sub(r"\[[^\]]*\]", "", re.sub(r"(^|\s+)#.*$", "", line)).strip()
        if line:
            lines.append(line)
    return lines


def steps(page: Path) -> list[tuple[str, str]]:
    """What a page runs, in order: ("cli", a coworkenv line), ("python", a script) or ("file", a titled block)."""
    out: list[tuple[str, str]] = []
    for block in blocks(page):
        assert block.lang not in SHELLS, (
            f"{page.name}: a {block.lang} block; commands go in bash blocks, output in text"
        )
        if block.not_run:
            continue
        if block.lang == "bash":
            for line in commands(block):
                assert line.startswith("coworkenv "), f"{page.name}: `{line}` is neither run nor marked not run"
                out.append(("cli", line))
        elif block.lang == "python":
            out.append(("python", block.text))
        elif block.title:
            out.append(("file", f"{block.title}\n{block.text}"))
    return out


def concrete(command: str, url: str) -> list[str]:
    for pattern, repl in SHRINK:
        command = re.sub(pattern, repl, command)
    command = re.sub(r"openai:([^@\s]+)@\S+", rf"openai:\1@{url}", command)
    command = command.replace("../shared/", f"{ROOT.parent}/shared/")
    args = shlex.split(command)[1:]
    expanded = [p for a in args for p in (sorted(glob.glob(a)) if "*" in a else [a])]
    for prefix, extra in EXTRA.items():
        if " ".join(expanded).startswith(prefix):
            expanded += extra
    return expanded


def test_the_readme_shows_the_commands_of_every_stage() -> None:
    lines = [line for _, line in steps(ROOT / "README.md")]
    names = {" ".join(c.split()[1:3]) if c.split()[1] in ("export", "train", "bank") else c.split()[1] for c in lines}
    stages = {"--version", "validate", "verify", "run", "synth", "bank stats", "rollout", "export sft"}
    assert stages | {"export rl", "train sft", "train grpo", "eval", "report"} <= names


def test_every_page_marks_what_it_does_not_run() -> None:
    for page in PAGES:
        for block in blocks(page):
            if block.not_run:
                assert len(block.not_run) > len("<!-- not run: -->") + 5, f"{page.name}: say why a block is not run"
        steps(page)  # an unmarked line that is not a coworkenv command fails here


@pytest.mark.parametrize("page", [p for p in PAGES if steps(p)], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_of_a_page_works_as_written(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    todo = steps(page)
    if any("claw-eval-sample" in text for _, text in todo) and not CLAW_SAMPLE.is_dir():
        pytest.skip("the Claw-Eval sample is not in this checkout")
    for module in ("torch", "openai", "ray"):
        pytest.importorskip(module)
    from coworkenv.cli import app
    from test_openai_policy import FakeServer, Reply, completion

    server = FakeServer()
    server.script(Reply(body=completion({"content": "Done: everything you asked for is handled."})))
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    try:
        for kind, text in todo:
            if kind == "file":
                name, _, body = text.partition("\n")
                Path(name).parent.mkdir(parents=True, exist_ok=True)
                Path(name).write_text(body, encoding="utf-8")
                continue
            if kind == "python":
                done = subprocess.run(
                    [sys.executable, "-c", text], capture_output=True, text=True, env=env, timeout=120
                )
                assert done.returncode == 0, f"{page.name}: python block failed\n{text}\n{done.stderr[-3000:]}"
                continue
            command, _, into = text.partition(" > ")
            args = concrete(command, server.url)
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 0, f"{text}\n  ran as: {' '.join(args)}\n{result.output}\n{result.exception}"
            if into:
                Path(into.strip()).write_text(result.output, encoding="utf-8")
    finally:
        server.httpd.shutdown()
