"""Adversarial spec files: each once crashed or hung `coworkenv validate` (see the hostile-input tests
and ``benchmarks/validate_adversarial.py``, which times them)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

EXAMPLE = Path(__file__).parent.parent / "examples" / "contractor_access_setup.yaml"
WHEN = "when: not endswith(args.email, '@northwind.io')"
WHERE = "where: r.email == 'julia.novak@fabrikam.cloud' and r.company == 'Fabrikam Cloud' and contains(r.name, 'Julia')"

LAUGHS = "".join(
    ["lol0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"]
    + [f"lol{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)]
)


def _replace(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _when(expr: str) -> str:
    return _replace(EXAMPLE.read_text(), WHEN, "when: " + json.dumps(expr))


def _where(expr: str) -> str:
    return _replace(EXAMPLE.read_text(), WHERE, "where: " + json.dumps(expr))


def _big() -> str:
    """A valid spec of about 6 MB: thousands of chat messages."""
    data = yaml.safe_load(EXAMPLE.read_text())
    first = data["services"]["chat"]["messages"][0]
    data["services"]["chat"]["messages"] += [
        {**first, "id": f"cm-x{i}", "text": f"filler message {i} " + "lorem ipsum " * 40} for i in range(11_000)
    ]
    return yaml.safe_dump(data, sort_keys=False, width=100)


def _reference(steps: int) -> str:
    """The example with its first reference step repeated ``steps`` times (as JSON, which is YAML too: fast to
    write)."""
    data = yaml.safe_load(EXAMPLE.read_text())
    data["reference"] = [data["reference"][0]] * steps + data["reference"]
    return json.dumps(data)


def adversarial_texts() -> dict[str, str | bytes]:
    """File name -> content of every adversarial spec."""
    text = EXAMPLE.read_text()
    as_json = json.dumps(yaml.safe_load(text))
    return {
        "invalid_utf8.yaml": _replace(text, "title: ", "title: \xff").encode("latin-1", "replace"),
        "digits5000.yaml": _replace(text, "difficulty: hard", "difficulty: hard\nmax_turns: " + "9" * 5000),
        "digits5000.json": as_json[:-1] + ', "max_turns": ' + "9" * 5000 + "}",
        "deep10k.yaml": _replace(text, "difficulty: hard", "difficulty: " + "[" * 10_000 + "]" * 10_000),
        "deep100k.json": as_json[:-1] + ', "tags": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "deep200.yaml": _replace(text, "difficulty: hard", "difficulty: hard\ntags: " + "[" * 200 + "]" * 200),
        "billion_laughs.yaml": LAUGHS + _replace(text, "value: julia.novak@fabrikam.cloud", "value: *a9"),
        "big6mb.yaml": _big(),
        "weight_inf.yaml": _replace(
            text,
            "- {id: asked_email, kind: asked_user, slot: email}",
            "- {id: asked_email, kind: asked_user, slot: email, weight: .inf}",
        ),
        "parens300.yaml": _when("(" * 300 + "true" + ")" * 300),
        "not5000.yaml": _when("not " * 5000 + "true"),
        "minus5000.yaml": _where("-" * 5000 + "1 == 1"),
        "plus3000.yaml": _where("+".join(["1"] * 3000) + " == 1"),
        "expr800kb.yaml": _where("r.email == '" + "a" * 800_000 + "'"),
        "printf_key.yaml": _when("'%(zz)s' % args == 'x'"),
        "printf_width.yaml": _where("'%0999999999d' % 1 == 'x'"),
        "repeat1e9.yaml": _where("'a' * 1000000000 == r.email"),
        "hidden_size.yaml": _where("len(str([[1]*999999]*999999)) > 0 and r.email == 'x'"),
        "eq_chain.yaml": _where(" and ".join(["[1]*999999 == [1]*999999"] * 130)),
        "aliased_text.yaml": _replace(
            text, "title: ", "notes: &mb " + "m" * 1_000_000 + "\nmore: [" + ", ".join(["*mb"] * 300) + "]\ntitle: "
        ),
        "template300.yaml": _replace(
            text, "  - {answer: 'Done: I told", "  - {answer: '" + '${"a"*999999}' * 300 + " I told"
        ),
        "reference10k.yaml": _reference(10_000),
        "weights1e308.yaml": _replace(
            text,
            "- {id: asked_email, kind: asked_user, slot: email}",
            "- {id: asked_email, kind: asked_user, slot: email, weight: 1.0e+308}",
        ),
        "duplicate_key.yaml": text + "\ntitle: again\n",
    }


def write_adversarial(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, content in adversarial_texts().items():
        path = folder / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        paths[name] = path
    return paths
