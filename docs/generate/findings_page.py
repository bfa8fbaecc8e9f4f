"""The verifier's findings and probes, read off the code: each finding kind, the hints it comes with, each probe.

A finding kind's meaning is the comment beside it in the ``FindingKind`` literal; its hints are
the literal ``hint=`` texts of every ``Finding(kind=...)`` the package builds (an f-string's
fields shown as ``{...}``), found by parsing the source, so a new finding or hint appears here
when the site is next built.
"""

from __future__ import annotations

import ast
import inspect
import io
import tokenize
from collections import defaultdict
from pathlib import Path

import coworkenv
from coworkenv.verify import findings
from coworkenv.verify.gaming import probe_hint
from coworkenv.verify.probes import PROBES

from .schema_pages import cell, prose


def kind_meanings() -> dict[str, str]:
    """Each finding kind with the comment written beside it in the ``FindingKind`` literal."""
    meanings: dict[str, str] = {}
    last: str | None = None
    tokens = tokenize.generate_tokens(io.StringIO(inspect.getsource(findings)).readline)
    for token in tokens:
        if token.type == tokenize.STRING and token.string.strip("\"'") in findings.FINDING_KINDS:
            last = token.string.strip("\"'")
        elif token.type == tokenize.COMMENT and last is not None and last not in meanings:
            meanings[last] = token.string.lstrip("# ").strip()
    missing = [k for k in findings.FINDING_KINDS if k not in meanings]
    if missing:
        raise ValueError(f"finding kinds without a comment beside them in FindingKind: {', '.join(missing)}")
    return {k: meanings[k] for k in findings.FINDING_KINDS}


def _text(node: ast.expr) -> str | None:
    """A literal or f-string as text, with an f-string's fields shown as {...}; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(v) or "{…}" if isinstance(v, ast.Constant) else "{…}" for v in node.values)
    return None


def hints() -> dict[str, list[str]]:
    """Every literal hint of a ``Finding(kind=..., hint=...)`` in the package, by kind, in source order."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(Path(coworkenv.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Finding"
            ):
                continue
            args = {k.arg: k.value for k in node.keywords}
            kind = _text(args["kind"]) if "kind" in args else None
            hint = _text(args["hint"]) if "hint" in args else None
            if kind and hint and hint not in found[kind]:
                found[kind].append(hint)
    return found


def findings_page() -> str:
    """Finding kinds with their meaning and hints, then the probes with what they do."""
    by_kind = hints()
    lines = [
        "# Verifier findings and probes",
        "",
        "Generated from the verifier's code when the site is built. A rejected spec gets one finding",
        "per problem: its `kind`, `where` (the spec field at fault), the `evidence` and a repair `hint`.",
        "`coworkenv verify SPEC` prints them; the repair loops act on them.",
        "",
        "## Finding kinds",
        "",
    ]
    for kind, meaning in kind_meanings().items():
        lines += [f"### `{kind}`", "", prose(meaning[:1].upper() + meaning[1:]) + ".", ""]
        if kind == "probe_passed":
            lines += ["Hint: see [the probes](#probes) below.", ""]
        elif by_kind.get(kind):
            lines += ["Hints it comes with:", ""] + [f"- {cell(h)}" for h in by_kind[kind]] + [""]
    lines += [
        "## Probes",
        "",
        "The wrong behaviours the verifier plays on every spec they apply to (chosen by what the spec",
        "contains, never by its tags). Each must score below the pass mark; a probe that passes is a",
        f'`probe_passed` finding with the hint "{probe_hint("do_nothing")}" (a few variants name a more',
        "specific fix). `coworkenv run SPEC --policy probe:NAME` plays one.",
        "",
        "| probe | what it does |",
        "|---|---|",
    ]
    for name, probe in PROBES.items():
        doc = (type(probe).__doc__ or "").strip().split("\n\n")[0]
        lines.append(f"| `{name}` | {cell(doc)} |")
    return "\n".join(lines) + "\n"
