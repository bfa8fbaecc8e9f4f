"""The normalised forms of values (times, dates, numbers, money, names) the verifier compares."""

from __future__ import annotations

from datetime import date

import pytest

from coworkenv.values import clock, forms, mentioned, mentions

TODAY = date(2025, 3, 3)  # a Monday


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("after 2pm", "14:00"),
        ("at 9:30 a.m.", "09:30"),
        ("around noon", "12:00"),
        ("the $1,200 budget", 1200),
        ("1.200,00 EUR", "1200 EUR"),
        ("a one-hour slot", 60),
        ("half an hour", 30),
        ("tomorrow", "2025-03-04"),
        ("the day after tomorrow", "2025-03-05"),
        ("this Friday", "2025-03-07"),
        ("next Monday", "2025-03-10"),
        ("in 2 weeks", "2025-03-17"),
        ("3 days ago", "2025-02-28"),
        ("on 4 March", "2025-03-04"),
        ("Mar 4th", "2025-03-04"),
        ("24-28 March", "2025-03-28"),
        ("March 4, 2025 at 3pm", "2025-03-04T15:00"),
        ("Ortiz, Sam", "Sam Ortiz"),
        ("sam.ortiz@corp.com", "Sam Ortiz"),
    ],
)
def test_a_value_in_another_form_is_mentioned(text: str, value: object) -> None:
    assert mentioned(value, text, mentions(text, TODAY))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("after 4pm", "14:00"),
        ("$1,250", 1200),
        ("March 4, 2024", "2025-03-04"),  # another year
        ("Today is Monday 2025-03-03", "2025-03-10"),  # a weekday labelling a date is not "next Monday"
        ("3 days", "2025-03-06"),  # a length, not a date
        ("tkt-1200", 1200),
        ("Samantha Ortiz", "Sam Ortiz"),
    ],
)
def test_a_different_value_is_not_mentioned(text: str, value: object) -> None:
    assert not mentioned(value, text, mentions(text, TODAY))


def test_clock_reads_the_context() -> None:
    assert clock("You work for Dana. Today is Monday 2025-03-03. It is now 10:15.") == TODAY
    assert clock("No date here.") is None


def test_free_text_has_no_value_forms() -> None:
    assert forms("the usual one") == [] and forms(True) == []


@pytest.mark.parametrize("today", [date(9999, 12, 31), date(1, 1, 1), date(2025, 3, 3)])
def test_a_far_off_relative_date_is_just_text(today: date) -> None:
    text = "Cancel them in 9999999 days, or 99999999 weeks ago; tomorrow, yesterday, next Friday or last Monday."
    dates = {k for k in mentions(text, today) if k[0] == "date"}
    assert all(date.fromisoformat(d) for _, d in dates)  # only days the calendar has
    assert ("num", 9999999.0) in mentions(text, today)
