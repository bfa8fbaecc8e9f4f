"""Every command the README and the docs pages show runs as written, page by page, from a clean folder.

A page's ``bash`` blocks hold `coworkenv …` lines, run in order in a fresh folder holding a copy of
``examples/``; its ``python`` blocks run as scripts there, after the commands before them, and a block
with a ``title="path"`` is written to that file first (the spec a tutorial then validates). A block
that cannot run in a test (a server that runs until stopped, a GPU job, ``make``) is preceded by
``<!-- not run: reason -->``; any other line in a bash block fails the test, so a command added to a
page later is either run or marked. Only sizes shrink (fewer environments, samples and steps), and two
things a test can't have are swapped: the `embedded` model (a download) for `tiny`, and
OpenAI-compatible endpoints for a local fake server.

What is not run is still checked against the code: every `coworkenv …` line a page shows (in a block
marked not run, with its [optional] parts, in a ``$ coworkenv`` line of an output block, or inline in
the prose, CONTRIBUTING.md's included) must name commands and options that exist, with values of the
right type; an option named on its own must belong to some command; a `make` target, a script and the
options given to a Python script, and an extra of a `pip install` must exist. An output block whose
command names files of the checkout is run from the checkout and must print what the page shows.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from coworkenv.cli import app

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]

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
FENCED = re.compile(r"```.*?```", re.S)
INLINE = re.compile(r"`([^`]+)`")


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


def commands(block: Block, optional: bool = False) -> list[str]:
    """The command lines of a bash block, without comments and `\\` continuations; [optional] parts kept if asked."""
    lines = []
    for line in block.text.replace("\\\n", " ").splitlines():
        line = re.sub(r"(^|\s+)#.*$", "", line)
        line = re.sub(r"\[([^\]]*)\]", r"\1" if optional else "", line).strip()
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


def shown(page: Path) -> list[tuple[str, bool]]:
    """Every command line a page shows, run or not, and whether it is whole: bash lines with their
    [optional] parts and the `$` line of an output block are; inline commands and options may be parts."""
    lines: list[tuple[str, bool]] = []
    for block in blocks(page):
        if block.lang == "bash":
            lines += [(line, True) for line in commands(block, optional=True)]
        elif block.text.startswith("$ "):
            lines.append((block.text.splitlines()[0].removeprefix("$ "), True))
    for span in INLINE.findall(FENCED.sub("", page.read_text(encoding="utf-8"))):
        span = " ".join(span.split())
        first = span.split()[0]
        ours = first in COMMANDS and "--" in span  # `train sft --lora`, `run --policy`
        if ours or first.startswith("--") or (first in ("coworkenv", "make", "python") and " " in span):
            lines.append((re.sub(r"\[([^\]]*)\]", r"\1", span), False))
        elif "pip install" in span:
            lines.append((span, False))
    return lines


def _walk(command: object) -> list[object]:
    """The commands under ``command`` (itself when it has none)."""
    subs = command.commands.values() if isinstance(command, TyperGroup) else []
    return [c for sub in subs for c in _walk(sub)] or [command]


def _options(command: object) -> frozenset[str]:
    return frozenset(o for c in [command, *_walk(command)] for p in c.params for o in p.opts + p.secondary_opts)


ROOT_COMMAND = typer.main.get_command(app)
COMMANDS = frozenset(ROOT_COMMAND.commands)


def misuse(line: str, whole: bool = True) -> str | None:
    """What a command line shown on a page names that does not exist, or None when all of it does."""
    words = shlex.split(line.partition(" > ")[0])
    while re.fullmatch(r"[A-Z_]+=\S*", words[0]):  # VAR=value before the program
        words.pop(0)
    program, args = words[0], words[1:]
    if program == "coworkenv" or program in COMMANDS:
        return cli_misuse(args if program == "coworkenv" else words, whole)
    if program.startswith("--"):
        unknown = [w for w in words if w.startswith("--") and w not in _options(ROOT_COMMAND)]
        return f"no command has the option(s) {unknown}" if unknown else None
    if program == "make":
        targets = re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
        missing = [a for a in args if a not in targets]
        return f"the Makefile has no target(s) {missing}" if missing else None
    if program in ("python", "bash"):
        script = ROOT / args[0]
        if not script.is_file():
            return f"{args[0]} does not exist"
        text = script.read_text(encoding="utf-8")
        unknown = [w for w in args[1:] if program == "python" and w.startswith("--") and f'"{w}"' not in text]
        return f"{args[0]} has no option(s) {unknown}" if unknown else None
    if program == "pip":
        extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
            "optional-dependencies"
        ]
        named = [e for w in args for group in re.findall(r"\[([^\]]+)\]", w) for e in group.split(",")]
        missing = [e for e in named if e not in extras]
        return f"pyproject.toml has no extra(s) {missing}" if missing else None
    return None  # another project's tool (vf-eval, mkdocs, ruff, pytest): not ours to check


def cli_misuse(args: list[str], whole: bool) -> str | None:
    """Why coworkenv's parser refuses ``args`` (a command or option it lacks, an argument too many or
    missing, a value of the wrong type); for a part of a command line, its commands and options alone."""
    command, path = ROOT_COMMAND, ["coworkenv"]
    args = args if whole else [a for a in args if a not in ("…", "...")]  # `train … --model`: any train command
    while isinstance(command, TyperGroup) and args and not args[0].startswith("-"):
        sub = command.get_command(typer.Context(command), args[0])
        if sub is None:
            return f"`{' '.join(path)}` has no command {args[0]!r}"
        path.append(args[0])
        command, args = sub, args[1:]
    if not whole:
        unknown = [a for a in args if a.startswith("-") and a not in _options(command)]
        return f"`{' '.join(path)}` has no option(s) {unknown}" if unknown else None
    try:
        command.make_context(" ".join(path), list(args))
    except typer.Exit:  # --version or --help: answered, nothing to run
        return None
    except typer.TyperException as exc:
        return f"{' '.join(path)}: {exc}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_a_page_shows_exists_as_written(page: Path) -> None:
    wrong = [f"`{line}`: {why}" for line, whole in shown(page) if (why := misuse(line, whole))]
    assert not wrong, f"{page.name}:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    ("line", "whole"),
    [
        ("coworkenv synth --n 10 --sead 0 --out bank", True),  # a misspelt option
        ("coworkenv bank list bank", True),  # a subcommand that does not exist
        ("coworkenv synth --n ten --out bank", True),  # a value of the wrong type
        ("coworkenv report runs/a runs/b", True),  # an argument too many
        ("coworkenv import claw-eval tasks", True),  # a required option left out
        ("coworkenv serve mcp SPEC --transport http --tls", False),  # inline parts: an option of no such command
        ("coworkenv bank list", False),
        ("--workpsace small", False),
        ("train sft --loraa", False),
        ("make quickstat", True),
        ("python benchmarks/runtime.py --recrods 10", True),
        ("JOB_SECONDS=1 bash benchmarks/device/no_such.sh .whl", True),
        ("pip install -e '.[doc]'", False),
    ],
)
def test_a_command_that_does_not_exist_as_written_is_caught(line: str, whole: bool) -> None:
    assert misuse(line, whole)


def test_a_part_of_a_command_shown_inline_needs_only_its_own_names() -> None:
    for part in ("coworkenv synth --blueprints NAME", "train … --model", "coworkenv serve mcp SPEC --transport http"):
        assert misuse(part, whole=False) is None, part
    assert misuse("coworkenv synth --blueprints NAME")  # as a whole line it lacks --n and --out


def outputs(page: Path) -> list[tuple[str, str]]:
    """The output blocks that show their command: (the command line, what it printed)."""
    found = [b.text.partition("\n") for b in blocks(page) if b.lang == "text" and b.text.startswith("$ coworkenv ")]
    return [(line.removeprefix("$ "), printed) for line, _, printed in found]


def test_an_output_block_shows_what_its_command_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from the checkout when the files it names are there (a page may show a made-up file's report)."""
    monkeypatch.chdir(ROOT)
    checked = 0
    for page in PAGES:
        for line, printed in outputs(page):
            args = shlex.split(line)[1:]
            if not all(Path(a).exists() for a in args if a.endswith((".yaml", ".yml", ".json")) or "/" in a):
                continue
            result = CliRunner().invoke(app, args)
            assert " ".join(result.output.split()) == " ".join(printed.split()), (
                f"{page.name}: `{line}` prints\n{result.output}"
            )
            checked += 1
    assert checked, "no output block names files of the checkout"


@pytest.mark.parametrize("page", [p for p in PAGES if steps(p)], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_of_a_page_works_as_written(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    todo = steps(page)
    if any("claw-eval-sample" in text for _, text in todo) and not CLAW_SAMPLE.is_dir():
        pytest.skip("the Claw-Eval sample is not in this checkout")
    for module in ("torch", "openai", "ray"):
        pytest.importorskip(module)
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
