"""Incident post-mortem: the second day sees only the note, and only the overnight mail knows the root cause."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build

from coworkenv.agents import OracleTeacher
from coworkenv.runtime import Environment, run_episode
from coworkenv.synth.composer import compose, plan


class TestIncidentPostmortem(BlueprintCases):
    name = "incident_postmortem"

    def test_day_two_is_a_notes_stage_reading_the_day_one_note(self) -> None:
        draft = build(self.name)
        (stage,) = draft.stages
        assert stage.context == "notes" and stage.notes
        note = next(s for s in draft.reference if s.get("call") == "documents_create")
        assert note["args"]["path"] == stage.notes
        assert draft.clock and draft.clock.endswith("T17:30")

    def test_only_the_overnight_mail_tells_the_root_cause(self) -> None:
        for seed in range(6):
            draft = build(self.name, seed=seed)
            (stage,) = draft.stages
            word = next(c for c in stage.checks if c.kind == "answer_contains").values[0]
            mail = next(m["record"] for m in stage.mutations if m["op"] == "insert")
            assert word in mail["body"] and word not in repr(draft.fixtures)

    def test_the_oracle_sees_the_note_not_yesterday(self) -> None:
        spec = compose(plan(1, 0, [self.name]))
        env = Environment(spec)
        traj = run_episode(env, OracleTeacher())
        assert traj.grade.passed and len(traj.grade.stages) == 2
        assert env.messages[0]["role"] == "system" and "tickets_get_oncall" not in str(env.messages)
