"""Claw-Eval tasks that cannot run offline are left out by reason, before their fixtures are read; the whole
upstream ``tasks/`` folder imports with no failure, and a benchmark named by a relative path with ``..`` imports
as the absolute path does."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from coworkenv.cli import app
from coworkenv.interop.claw_import import ClawEvalError, NotOffline, import_task
from coworkenv.verify.static import static_findings

MIRROR = Path("/work/.mirror/claw-eval+claw-eval/repo")
GENERAL = Path("/work/shared/claw-eval-general")
UPSTREAM = (
    "171 of 300 imported; 129 left out (cannot run offline; 2 conversation only; 101 multimodal; 12 need OCR; "
    "3 need image captions; 11 no tool runs offline), 0 failed"
)


def write_task(root: Path, task_id: str = "T900_probe", **overrides: object) -> Path:
    """A one-service task (a mail inbox) that imports as it is; ``overrides`` replace its top-level keys."""
    folder = root / "tasks" / task_id
    (folder / "fixtures" / "gmail").mkdir(parents=True, exist_ok=True)
    inbox = [
        {
            "message_id": "m1",
            "from": "a@x.test",
            "to": "me@x.test",
            "date": "2026-03-02",
            "subject": "Invoice",
            "body": "due Friday",
        }
    ]
    (folder / "fixtures" / "gmail" / "inbox.json").write_text(json.dumps(inbox), encoding="utf-8")
    task: dict[str, object] = {
        "task_id": task_id,
        "category": "workflow",
        "prompt": {"text": "Which invoice is due?"},
        "services": [{"name": "gmail", "env": {"GMAIL_FIXTURES": f"tasks/{task_id}/fixtures/gmail/inbox.json"}}],
        "tools": [{"name": "gmail_list_messages"}],
        "scoring_components": [
            {"name": "due", "weight": 1.0, "check": {"type": "keywords_present", "keywords": ["Friday"]}}
        ],
    }
    task.update(overrides)
    (folder / "task.yaml").write_text(yaml.safe_dump(task, allow_unicode=True), encoding="utf-8")
    return folder


def left_out(folder: Path) -> NotOffline:
    with pytest.raises(NotOffline) as info:
        import_task(folder)
    return info.value


def test_the_probe_task_imports_as_it_is(tmp_path: Path) -> None:
    spec, _ = import_task(write_task(tmp_path))  # an offline task: what the tests below change leaves it out
    assert spec.tools == ["mail_search"] and static_findings(spec) == []


@pytest.mark.parametrize(
    ("service", "reason", "message"),
    [
        ("caption", "need image captions", "services[0].name: 'caption' gives image captions"),
        ("ocr_t50", "need OCR", "services[0].name: 'ocr_t50' gives OCR"),
    ],
)
def test_a_perception_service_naming_a_folder_is_left_out_before_its_fixtures_are_read(
    tmp_path: Path, service: str, reason: str, message: str
) -> None:
    env = {f"{service.upper()}_FIXTURES": "tasks/T900_probe/fixtures"}  # a folder of media, as upstream names it
    folder = write_task(tmp_path, services=[{"name": service, "env": env}], tools=[{"name": f"{service}_run"}])
    exc = left_out(folder)
    assert exc.reason == reason and str(exc).startswith(f"{folder / 'task.yaml'}: {message}")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"category": "video_qa"}, "category: 'video_qa' is a multimodal task"),
        ({"tags": ["multimodal"]}, "tags: the task is tagged 'multimodal'"),
        ({"prompt": {"text": "What phone?", "attachments": ["fixtures/media/a.JPG"]}}, "prompt.attachments: "),
    ],
)
def test_a_task_the_model_must_see_is_left_out_by_field(
    tmp_path: Path, overrides: dict[str, object], message: str
) -> None:
    folder = write_task(tmp_path, **overrides)
    exc = left_out(folder)
    assert exc.reason in ("multimodal", "attached media") and str(exc).startswith(f"{folder / 'task.yaml'}: {message}")


def test_a_text_attachment_or_a_service_merely_starting_like_one_is_not_left_out(tmp_path: Path) -> None:
    spec, _ = import_task(write_task(tmp_path, prompt={"text": "Summarise", "attachments": ["fixtures/notes.txt"]}))
    assert spec.tools == ["mail_search"]
    ocrm = write_task(tmp_path / "o", services=[{"name": "ocrm", "env": {"OCRM_FIXTURES": "tasks/T900_probe/x.json"}}])
    with pytest.raises(ClawEvalError, match="is not in the benchmark folder") as info:  # an offline task's missing file
        import_task(ocrm)
    assert not isinstance(info.value, NotOffline)


def test_a_missing_or_malformed_fixture_of_an_offline_task_still_fails(tmp_path: Path) -> None:
    folder = write_task(tmp_path)
    (folder / "fixtures" / "gmail" / "inbox.json").write_text("[{broken", encoding="utf-8")
    with pytest.raises(ClawEvalError, match="not readable JSON") as info:
        import_task(folder)
    assert not isinstance(info.value, NotOffline)
    (folder / "fixtures" / "gmail" / "inbox.json").unlink()
    with pytest.raises(ClawEvalError, match="is not in the benchmark folder") as info:
        import_task(folder)
    assert not isinstance(info.value, NotOffline)


def test_a_conversation_with_no_tools_is_left_out_with_the_spec_models_reason(tmp_path: Path) -> None:
    agent = {"enabled": True, "persona": "You bought a flat in 2021.", "max_rounds": 4}
    folder = write_task(tmp_path, services=[], tools=[], scoring_components=[], user_agent=agent)
    exc = left_out(folder)
    assert exc.reason == "conversation only"
    assert "a spec needs a rule-based check, and no check kind holds 'the agent answered'" in str(exc)
    terminal = write_task(tmp_path / "t", services=[], tools=[], sandbox_files=["fixtures/decoder.py"])
    assert left_out(terminal).reason == "no tool runs offline"  # no persona: a shell task, not a conversation


def test_a_batch_with_a_failure_exits_non_zero_and_counts_each(tmp_path: Path) -> None:
    write_task(tmp_path, "T900_fine")
    write_task(tmp_path, "T901_video", category="video_qa")
    broken = write_task(tmp_path, "T902_broken")
    (broken / "fixtures" / "gmail" / "inbox.json").write_text("{", encoding="utf-8")
    result = CliRunner().invoke(app, ["import", "claw-eval", str(tmp_path / "tasks"), "--out", str(tmp_path / "o")])
    text = " ".join(result.output.split())
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "1 of 3 imported; 1 left out (cannot run offline; 1 multimodal), 1 failed" in text
    (broken / "task.yaml").unlink()  # without the failure the batch succeeds
    result = CliRunner().invoke(app, ["import", "claw-eval", str(tmp_path / "tasks"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0 and "1 of 2 imported; 1 left out" in " ".join(result.output.split())


@pytest.mark.skipif(not GENERAL.is_dir(), reason="Claw-Eval general tasks not present")
def test_the_general_tasks_import_the_same_from_a_relative_path_with_dotdot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "work"
    here.mkdir()
    monkeypatch.chdir(here)
    relative = os.path.relpath(GENERAL, here)
    assert relative.startswith("..")
    outs = []
    for source, out in ((relative, "rel"), (str(GENERAL), "abs")):
        result = CliRunner().invoke(app, ["import", "claw-eval", source, "--out", str(tmp_path / out)])
        assert result.exit_code == 0 and "Traceback" not in result.output, result.output
        assert "53 of 55 imported; 2 left out" in " ".join(result.output.split())
        outs.append({p.name: p.read_bytes() for p in (tmp_path / out).glob("*.yaml")})
    assert outs[0] == outs[1] and len(outs[0]) == 53


def extract_tasks(dest: Path) -> None:
    """The mirror's ``tasks/`` folder under ``dest``, every file the mirror holds (its largest media may be absent)."""
    git = ["git", f"--git-dir={MIRROR}"]
    tree = subprocess.run([*git, "ls-tree", "-r", "-z", "HEAD", "tasks"], capture_output=True, check=True).stdout
    entries = [e.split(b"\t", 1) for e in tree.split(b"\0") if e]
    shas = [meta.split()[2].decode() for meta, _ in entries]
    batch = "".join(f"{s}\n" for s in shas).encode()
    blobs = subprocess.run([*git, "cat-file", "--batch"], input=batch, capture_output=True, check=True).stdout
    pos = 0
    for _, name in entries:
        end = blobs.index(b"\n", pos)
        header, pos = blobs[pos:end].split(), end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        target = dest / name.decode()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blobs[pos : pos + size])
        pos += size + 1


@pytest.mark.skipif(not MIRROR.is_dir(), reason="the upstream Claw-Eval mirror is not on this machine")
def test_every_upstream_task_imports_or_is_left_out_for_a_stated_reason(tmp_path: Path) -> None:
    extract_tasks(tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["import", "claw-eval", str(tmp_path / "tasks"), "--out", str(out)])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output[-3000:]
    assert UPSTREAM in " ".join(result.output.split())
    lines = [json.loads(x) for x in (out / "claw_eval_import.jsonl").read_text(encoding="utf-8").splitlines()]
    assert not [x for x in lines if "error" in x]
    field = re.compile(r"task\.yaml: (services\[\d+\]\.name|category|tags|prompt\.attachments|tools): \S")
    assert all(field.search(x["left_out"]) for x in lines if "left_out" in x)
    by_id = {x["task_id"]: x for x in lines}
    for task in ("T056zh_phone_model_comparison", "T074_paper_review_injection", "T085_officeqa_army_expenditures"):
        assert by_id[task]["reason"].startswith("need "), by_id[task]
    assert all(by_id[t].get("reason") == "multimodal" for t in by_id if t.startswith("M"))
    assert (
        by_id["C01zh_mortgage_prepay"]["reason"]
        == by_id["C16en_hr_workforce_planning"]["reason"]
        == "conversation only"
    )
    assert by_id["T002_email_triage"]["spec_id"] == "claw_eval_t002_email_triage"
