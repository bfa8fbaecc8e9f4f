"""Claw-Eval multi-turn tasks: the persona becomes the user, grader rubrics are read without running them."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml

from claw_tasks import task_folder
from coworkenv.interop.claw_grader import component_rubric, read_grader
from coworkenv.interop.claw_import import ClawEvalError, NotOffline, import_task, task_folders
from coworkenv.spec import save_spec
from coworkenv.verify.static import static_findings

MIRROR = Path("/work/.mirror/claw-eval+claw-eval/repo")


def test_persona_becomes_the_user_and_grader_rubrics_the_judged_components(tmp_path: Path) -> None:
    spec, report = import_task(task_folder(tmp_path))
    assert static_findings(spec) == []
    assert spec.user.persona.startswith("## Core Identity") and "clinic_hours" in spec.user.persona
    assert report.multi_turn and report.user_turns == 5 and report.evaluation_only
    assert report.system_prompt_suffix == "Ask for what is missing." == spec.context  # Claw-Eval appends it
    assert spec.user.persona_turns == 5 and spec.is_multi_turn  # an LLM plays the persona, five replies at most
    rubrics = {j["name"]: j.get("rubric", "") for j in report.judged}
    assert "Domain: Clinic front desk" in rubrics["clarification_quality"]
    assert "- How many staff are there?" in rubrics["clarification_quality"]
    assert rubrics["content_quality"].endswith("Score the rota for completeness (0.0-1.0).")
    assert report.grader_notes == ["line 17: class FrontDeskGrader: def grade is not a string constant; not read"]
    assert "web_fetch" in report.unmapped_tools and report.scored == []


def test_a_grader_that_would_write_a_file_is_read_without_running_it(tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    hostile = textwrap.dedent(f"""\
        import pathlib
        pathlib.Path({str(marker)!r}).write_text("executed")
        RUBRIC = open({str(marker)!r}, "w").write("executed")
        CLARIFICATION_RUBRIC = "Only this is read."
        """)
    grader = read_grader(task_folder(tmp_path, grader=hostile) / "grader.py")
    import_task(tmp_path / "C90en_front_desk")
    assert not marker.exists()
    assert grader.constants == {"CLARIFICATION_RUBRIC": "Only this is read."}
    assert [n.split(":")[0] for n in grader.notes] == ["line 2", "line 3"]
    assert component_rubric("clarification_quality", grader) == "Only this is read."


def test_a_grader_that_is_not_python_gives_a_note(tmp_path: Path) -> None:
    _, report = import_task(task_folder(tmp_path, grader="class (:\n"))
    assert len(report.grader_notes) == 1 and report.grader_notes[0].startswith("not readable Python")
    assert all("rubric" not in j for j in report.judged)


@pytest.mark.parametrize(
    ("persona", "message"),
    [("", "user_agent.persona: String should have at least 1 character"), (["a"], "user_agent.persona: Input")],
)
def test_a_malformed_persona_is_refused_with_file_field_message(tmp_path: Path, persona: object, message: str) -> None:
    folder = task_folder(tmp_path, persona=persona)
    with pytest.raises(ClawEvalError, match=f"^{folder / 'task.yaml'}: {message}"):
        import_task(folder)


def test_a_malformed_user_agent_block_is_refused(tmp_path: Path) -> None:
    folder = task_folder(tmp_path)
    task = yaml.safe_load((folder / "task.yaml").read_text(encoding="utf-8"))
    task["user_agent"]["max_rounds"] = 0
    (folder / "task.yaml").write_text(yaml.safe_dump(task), encoding="utf-8")
    with pytest.raises(ClawEvalError, match=r"task\.yaml: user_agent\.max_rounds: Input should be greater"):
        import_task(folder)


def test_the_same_task_imported_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    folder = task_folder(tmp_path)
    outs = []
    for n in range(2):
        spec, _ = import_task(folder)
        save_spec(spec, tmp_path / f"{n}.yaml")
        outs.append((tmp_path / f"{n}.yaml").read_bytes())
    assert outs[0] == outs[1]


@pytest.mark.skipif(not MIRROR.is_dir(), reason="the upstream Claw-Eval mirror is not on this machine")
def test_every_upstream_multi_turn_task_imports_or_is_refused_with_a_message(tmp_path: Path) -> None:
    git = ["git", "-C", str(MIRROR)]
    names = subprocess.run([*git, "ls-tree", "-r", "--name-only", "HEAD", "tasks/"], capture_output=True, text=True)
    files = [f for f in names.stdout.splitlines() if f.startswith("tasks/C") and f.endswith((".yaml", ".py"))]
    for name in files:
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(subprocess.run([*git, "show", f"HEAD:{name}"], capture_output=True, check=True).stdout)
    folders = task_folders(tmp_path / "tasks")
    assert len(folders) == 38
    imported, refused = 0, 0
    for folder in folders:
        try:
            spec, report = import_task(folder)
        except NotOffline as exc:
            assert str(exc).startswith(f"{folder / 'task.yaml'}: tools: ")
            refused += 1
            continue
        assert static_findings(spec) == [] and report.multi_turn and report.judged
        imported += 1
    assert imported + refused == 38 and imported >= 35


def test_the_report_names_the_tools_that_need_the_live_web(tmp_path: Path) -> None:
    _, report = import_task(task_folder(tmp_path))
    assert report.needs_web == ["web_fetch"]
