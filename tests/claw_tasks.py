"""A Claw-Eval multi-turn task written for the project: a persona revealing details as asked, a grader with
rubrics and MUST_ASK questions, a tool that needs the live web."""

from __future__ import annotations

from pathlib import Path

import yaml

PERSONA = """\
## Core Identity
You run the front desk of a small veterinary clinic.

## Your Specific Details (reveal gradually when the assistant asks)
- clinic_hours: open 8 to 18 on weekdays
- staff: three vets and two nurses

Keep replies short (1-2 sentences).
"""

GRADER = '''\
"""A grader of the fixture task."""

from somewhere import Base

PREAMBLE = "shared text"


class FrontDeskGrader(Base):
    """Front desk planning."""

    DOMAIN = "Clinic front desk"
    MUST_ASK = ["What are the opening hours?", "How many staff are there?"]
    CLARIFICATION_RUBRIC = """Score how well the assistant asked about hours and staff (0.0-1.0)."""
    FINAL_ANSWER_RUBRIC = ""
    CONTENT_RUBRIC = """Score the rota for completeness (0.0-1.0)."""

    def grade(self):
        return 1.0
'''


def task_folder(root: Path, persona: object = PERSONA, grader: str = GRADER) -> Path:
    folder = root / "C90en_front_desk"
    (folder / "fixtures" / "contacts").mkdir(parents=True, exist_ok=True)
    (folder / "fixtures" / "contacts" / "contacts.json").write_text(
        '[{"contact_id": "c1", "name": "Dr Vale", "email": "vale@clinic.test"}]', encoding="utf-8"
    )
    task = {
        "task_id": "C90en_front_desk",
        "task_name": "Front desk rota",
        "category": "user_agent",
        "prompt": {"text": "Help me plan the front desk rota, I have not worked out the details yet."},
        "services": [{"name": "contacts"}],
        "tools": [
            {"name": "contacts_search", "input_schema": {"properties": {"query": {"type": "string"}}}},
            {"name": "web_fetch", "input_schema": {"properties": {"url": {"type": "string"}}}},
        ],
        "user_agent": {
            "enabled": True,
            "persona": persona,
            "max_rounds": 5,
            "system_prompt_suffix": "Ask for what is missing.",
        },
        "scoring_components": [
            {"name": "clarification_quality", "weight": 0.3, "check": {"type": "llm_judge", "description": "asks"}},
            {"name": "content_quality", "weight": 0.7, "check": {"type": "llm_judge", "description": "rota"}},
        ],
        "judge_rubric": "Judge the whole consultation.",
        "reference_solution": "Ask for the hours and the staff, then give a weekday rota.",
    }
    (folder / "task.yaml").write_text(yaml.safe_dump(task, allow_unicode=True), encoding="utf-8")
    (folder / "grader.py").write_text(grader, encoding="utf-8")
    return folder
