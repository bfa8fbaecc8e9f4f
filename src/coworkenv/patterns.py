"""Regular expressions from spec files, run on RE2: time linear in the text, never a hang.

A ``field_matches`` check's pattern comes from a spec (possibly one a language model wrote)
and is matched against text an agent wrote. Python's ``re`` backtracks: ``(a+)+b`` over 30
letters takes minutes, and a timeout would make a grade depend on the machine's speed, which
breaks determinism. RE2 compiles a pattern to an automaton instead: matching is linear in the
text, its memory is capped (``max_mem``), and the constructs that need backtracking
(backreferences, lookaround) are refused when the spec loads, with the reason. The pattern's
length and the text searched are bounded as well, and a pattern that matches empty text
(``.*``, ``x?``) is refused: it would hold for any record.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol

import re2

MAX_PATTERN = 500
"""Characters in one pattern."""
MAX_TEXT = 100_000
"""Characters of a field searched (a longer text is searched in its first MAX_TEXT)."""
MAX_MEM = 1 << 20
"""Bytes RE2 may use for one compiled pattern (a pattern that needs more does not compile)."""


def _options() -> object:  # an re2.Options
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False
    options.max_mem = MAX_MEM
    return options


class _Compiled(Protocol):
    """A compiled RE2 pattern, as far as this module uses it."""

    def search(self, text: str) -> object: ...


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> _Compiled:
    compiled: _Compiled = re2.compile(pattern, _options())
    return compiled


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be used in a check, or None."""
    if len(pattern) > MAX_PATTERN:
        return f"pattern of {len(pattern)} characters is longer than {MAX_PATTERN}"
    try:
        compiled = _compiled(pattern)
    except re2.error as exc:
        detail = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        return f"not a valid RE2 pattern (no backreferences or lookaround): {detail}"
    if compiled.search("") is not None:
        return "the pattern matches empty text, so it holds for any record"
    return None


def pattern_search(pattern: str, text: object) -> bool:
    """Whether ``pattern`` (case-insensitive) occurs in ``text``: in any item of a list (``to`` addresses, tags),
    in the string of any other value; ``None`` (a field not set) matches nothing."""
    if text is None:
        return False
    if isinstance(text, list):
        return any(pattern_search(pattern, item) for item in text[:1000])
    value = text if isinstance(text, str) else str(text)
    return _compiled(pattern).search(value[:MAX_TEXT]) is not None
