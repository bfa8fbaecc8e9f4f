"""Robustness counted in one pass from the end must grade every call log exactly as the ``list.index`` rule did,
including logs whose records repeat (equal records are where positions and ``index`` part)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from coworkenv.grading.checks import EpisodeLog
from coworkenv.grading.score import robustness
from coworkenv.trajectory import ToolCallRecord


def by_index(calls: list[ToolCallRecord]) -> float:
    """The rule as first written: a fault is recovered by a later successful call of its tool, "later" by index."""
    faults = [c for c in calls if c.fault]
    if not faults:
        return 1.0
    recovered = sum(any(c.ok and c.tool == f.tool and calls.index(c) > calls.index(f) for c in calls) for f in faults)
    return recovered / len(faults)


_call = st.tuples(
    st.integers(1, 3),  # step
    st.sampled_from(["call_1", "call_2"]),  # few ids: steps and ids repeat, so equal records occur
    st.sampled_from(["mail_send", "crm_update"]),
    st.booleans(),  # ok
    st.booleans(),  # fault
)


def _record(step: int, call_id: str, tool: str, ok: bool, fault: bool) -> ToolCallRecord:
    error = "503" if fault else None
    return ToolCallRecord(
        step=step, call_id=call_id, tool=tool, args={}, ok=ok and not fault, kind="write", error=error, fault=fault
    )


def _records(rows: list[tuple[int, str, str, bool, bool]]) -> list[ToolCallRecord]:
    return [_record(*row) for row in rows]


@settings(max_examples=300, deadline=None)
@given(st.lists(_call, max_size=8))
def test_robustness_equals_the_index_rule(rows: list[tuple[int, str, str, bool, bool]]) -> None:
    calls = _records(rows)
    assert robustness(EpisodeLog(calls=calls)) == by_index(calls)


def test_an_equal_record_before_the_fault_does_not_count_as_its_recovery() -> None:
    """A successful call equal to one made before the fault sits, by ``index``, before it: not a recovery, though it
    comes later in the log (the case that a plain position rule would grade differently)."""
    ok = _record(1, "call_1", "mail_send", True, False)
    fault = _record(2, "call_2", "mail_send", False, True)
    again = _record(1, "call_1", "mail_send", True, False)
    assert again == ok
    assert robustness(EpisodeLog(calls=[ok, fault, again])) == 0.0
    assert robustness(EpisodeLog(calls=[fault, again])) == 1.0
