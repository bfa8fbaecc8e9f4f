"""Store-line checks shared by the episode and line-part tests: a line is the record's full JSON dump, however it
is written."""

from __future__ import annotations

from typing import Any

import pytest

from coworkenv.rollout.lines import ToolMenu, _fast_line, record_bytes
from coworkenv.storage import json_text


def full_dump(record: Any) -> bytes:
    """The line as the slow path writes it: the record's JSON, UTF-8."""
    return json_text(record.model_dump(mode="json")).encode("utf-8")


def assert_full_dump_fallback(record: Any, menu: ToolMenu) -> None:
    """A record the typed path refuses: the line falls back to the full dump (or fails as the dump does)."""
    with pytest.raises((ValueError, TypeError, KeyError)):
        _fast_line(record, menu)
    try:
        expected = full_dump(record)
    except Exception as exc:  # the full dump itself fails: so does the line, the same way
        with pytest.raises(type(exc)):
            record_bytes(record, menu)
        return
    assert record_bytes(record, menu) == expected
