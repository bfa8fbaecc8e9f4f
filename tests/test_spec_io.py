"""Loading, saving and hashing specs, and errors that name the file and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from coworkenv.spec import SpecError, canonical_json, content_id, load_spec, save_spec, spec_from_data
from minispec import tiny_data, tiny_spec


def _write(path: Path, data: Any) -> Path:
    text = json.dumps(data) if path.suffix == ".json" else yaml.safe_dump(data, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".json"])
def test_load_yaml_and_json(tmp_path: Path, suffix: str) -> None:
    spec = load_spec(_write(tmp_path / f"tiny{suffix}", tiny_data()))
    assert spec == tiny_spec()


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_save_round_trip_is_byte_stable(tmp_path: Path, suffix: str) -> None:
    spec = tiny_spec(rules=[{"id": "p", "description": "d", "tool": "mail_send", "rule": "forbid"}])
    first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    save_spec(spec, first)
    again = load_spec(first)
    save_spec(again, second)
    assert again == spec and first.read_bytes() == second.read_bytes()
    assert not list(tmp_path.glob(".*.tmp")), "atomic writes leave no temporary files"


def test_canonical_json_and_content_id() -> None:
    a, b = tiny_spec(), tiny_spec(id="another-name")
    assert canonical_json(a) == canonical_json(tiny_spec())
    assert json.loads(canonical_json(a))["id"] == "tiny"
    assert content_id(a) == content_id(b), "the id is not part of the content"
    assert content_id(a) != content_id(tiny_spec(title="Something else"))
    assert len(content_id(a)) == 16


def _problems(exc: pytest.ExceptionInfo[SpecError]) -> str:
    return "\n".join(exc.value.problems)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"max_turns": "many"}, "max_turns"),
        ({"max_turns": 0}, "max_turns"),
        ({"difficulty": "extreme"}, "difficulty"),
        ({"checks": []}, "checks"),
        ({"checks": [{"id": "c", "kind": "telepathy"}]}, "checks[0]"),
        (
            {"checks": [{"id": "c", "kind": "count", "service": "mail", "collection": "messages", "value": "x"}]},
            "checks[0].count.value",
        ),
        ({"reference": [{"dance": "now"}]}, "reference[0]"),
        ({"user": {"opening": 5}}, "user.opening"),
        ({"rules": [{"id": "p", "description": "d", "tool": "t", "rule": "require_prior"}]}, "rules[0]"),
        (
            {
                "events": [
                    {
                        "id": "e",
                        "mutations": [{"service": "mail", "collection": "messages", "op": "delete", "id": "m1"}],
                    }
                ]
            },
            "events[0]",
        ),
        (
            {
                "events": [
                    {
                        "id": "e",
                        "after_step": 1,
                        "mutations": [
                            {"service": "mail", "collection": "messages", "op": "insert", "record": {"x": 1}}
                        ],
                    }
                ]
            },
            "events[0].mutations[0]",
        ),
        ({"faults": [{"tool": "mail_read", "on_call": 0}]}, "faults[0].on_call"),
        ({"surprise": True}, "surprise"),
        ({"services": {"mail": {"messages": [{"subject": "no id"}]}}}, "services.mail.messages"),
        (
            {
                "checks": [
                    {"id": "c", "kind": "asked_user", "slot": "a"},
                    {"id": "c", "kind": "asked_user", "slot": "b"},
                ]
            },
            "duplicate ids in checks",
        ),
    ],
)
def test_invalid_fields_are_named(tmp_path: Path, overrides: dict[str, Any], field: str) -> None:
    path = _write(tmp_path / "bad.yaml", tiny_data(**overrides))
    with pytest.raises(SpecError) as exc:
        load_spec(path)
    assert exc.value.path == str(path) and str(path) in str(exc.value)
    assert field in _problems(exc)


def test_missing_required_field(tmp_path: Path) -> None:
    data = tiny_data()
    del data["user"]
    with pytest.raises(SpecError) as exc:
        load_spec(_write(tmp_path / "bad.json", data))
    assert "user: Field required" in _problems(exc)


def test_malformed_yaml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("id: x\nservices: {mail: [unclosed\n", encoding="utf-8")
    with pytest.raises(SpecError) as exc:
        load_spec(path)
    assert str(path) in str(exc.value) and "not valid YAML" in _problems(exc)


def test_malformed_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"id": "x",', encoding="utf-8")
    with pytest.raises(SpecError) as exc:
        load_spec(path)
    assert str(path) in str(exc.value) and "not valid JSON" in _problems(exc)


@pytest.mark.parametrize("text", ["- just\n- a list\n", "42\n", ""])
def test_document_that_is_not_a_mapping(tmp_path: Path, text: str) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as exc:
        load_spec(path)
    assert "<root>: expected a mapping" in _problems(exc)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as exc:
        load_spec(tmp_path / "missing.yaml")
    assert "cannot read file" in _problems(exc)


def test_spec_from_data_names_its_source() -> None:
    with pytest.raises(SpecError) as exc:
        spec_from_data(tiny_data(max_turns=-1), "bank/shard-3.jsonl#17")
    assert str(exc.value).startswith("bank/shard-3.jsonl#17: invalid spec")


def test_record_ids_must_be_unique_text() -> None:
    for ids in (["m1", "m1"], [["m1"], "m2"], [1, 2]):
        records = [{"id": i, "subject": "s"} for i in ids]
        with pytest.raises(SpecError) as exc:
            spec_from_data(tiny_data(services={"mail": {"messages": records}}))
        assert "services.mail.messages" in _problems(exc)


REJECTED = {
    "invalid_utf8.yaml": "not UTF-8 text",
    "digits5000.yaml": "Exceeds the limit",
    "digits5000.json": "Exceeds the limit",
    "deep10k.yaml": "nesting depth",
    "deep100k.json": "nested deeper",
    "deep200.yaml": "tags[0][0]: nested deeper than 64 levels",
    "billion_laughs.yaml": "user.hidden_facts[0]: the document expands to more than",
    "weight_inf.yaml": "weight: Input should be a finite number",
    "aliased_text.yaml": "more: the document expands to more than 16000000 characters",
    "reference10k.yaml": "reference: List should have at most 200 items",
    "weights1e308.yaml": "weight: Input should be less than or equal to 1000000",
    "duplicate_key.yaml": "key 'title' given twice",
}


@pytest.fixture(scope="module")
def adversarial(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from adversarial_specs import adversarial_texts

    folder = tmp_path_factory.mktemp("adversarial")
    paths = {}
    for name, content in adversarial_texts().items():
        if name == "big6mb.yaml":  # timed in benchmarks/validate_adversarial.py, too slow for a unit test
            continue
        paths[name] = folder / name
        if isinstance(content, bytes):
            paths[name].write_bytes(content)
        else:
            paths[name].write_text(content, encoding="utf-8")
    return paths


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_adversarial_spec_files_are_spec_errors(adversarial: dict[str, Path], name: str) -> None:
    """Each of these once ended in a traceback or a hang: now one "file: field: message" error, fast."""
    import time

    start = time.perf_counter()
    with pytest.raises(SpecError) as info:
        load_spec(adversarial[name])
    assert time.perf_counter() - start < 3.0
    assert info.value.path == str(adversarial[name])
    assert REJECTED[name] in "\n".join(info.value.problems)


def test_adversarial_expressions_fail_validate_cleanly(adversarial: dict[str, Path]) -> None:
    """The CLI reports every adversarial file as invalid or (runtime-only hazards) valid, never a traceback."""
    from typer.testing import CliRunner

    from coworkenv.cli import app

    for name, path in adversarial.items():
        result = CliRunner().invoke(app, ["validate", str(path)])
        assert result.exception is None or isinstance(result.exception, SystemExit), (name, result.exception)
        assert str(path.name) in result.output
        if name in REJECTED or name.startswith(("parens", "not5000", "minus", "plus", "expr800")):
            assert result.exit_code != 0, name


def test_yaml_is_parsed_by_libyaml_when_installed() -> None:
    from coworkenv.spec import io

    if yaml.__with_libyaml__:
        assert issubclass(io._YAML_LOADER, yaml.CSafeLoader)


def test_spec_data_nested_too_deep_is_a_spec_error() -> None:
    data = tiny_data()
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    data["tags"] = deep
    with pytest.raises(SpecError, match="nested deeper"):
        spec_from_data(data, "deep")


def test_the_older_rules_key_loads_the_same_spec(tmp_path: Path) -> None:
    """Specs written with ``policies:`` load unchanged; a spec giving both keys is refused, naming them."""
    rule = {"id": "no_mail", "description": "never send mail", "tool": "mail_send", "rule": "forbid"}
    data = tiny_data(rules=[rule])
    older = {("policies" if k == "rules" else k): v for k, v in data.items()}
    path = tmp_path / "older.yaml"
    path.write_text(yaml.safe_dump(older))
    spec = load_spec(path)
    assert canonical_json(spec) == canonical_json(spec_from_data(data, "tiny"))
    assert "policies" not in canonical_json(spec) and '"rules"' in canonical_json(spec)
    path.write_text(yaml.safe_dump({**data, "policies": data["rules"]}))
    with pytest.raises(SpecError, match="under 'rules'"):
        load_spec(path)


def test_canonical_json_is_the_specs_whole_dump_and_follows_a_changed_workspace() -> None:
    """The fixtures' JSON is kept per fixtures object: a copy with other fixtures (or the same records in a new
    object) must never be encoded with the old ones, and the parts must join into exactly the whole dump."""
    spec = tiny_spec()
    whole = json.dumps(spec.model_dump(mode="json", exclude_none=True), sort_keys=True, separators=(",", ":"))
    assert canonical_json(spec) == whole and json.loads(canonical_json(spec, spec_id="x"))["id"] == "x"
    services = {**spec.services, "mail": {"messages": []}}
    changed = spec.model_copy(update={"services": services})
    assert json.loads(canonical_json(changed))["services"] == services != spec.services
    assert content_id(changed) != content_id(spec)
    same_records = spec.model_copy(update={"services": json.loads(json.dumps(spec.services))})
    assert content_id(same_records) == content_id(spec)


def test_compact_json_writes_what_the_standard_encoder_writes_and_takes_over_what_orjson_refuses() -> None:
    """orjson writes the bytes; a value it refuses (an integer past 64 bits, a lone surrogate, a key that is not
    text) falls to the standard encoder instead of failing, and NaN, which JSON cannot hold, is written null."""
    from coworkenv.spec.io import compact_bytes, compact_json

    def standard(value: object, sort_keys: bool = True) -> str:
        return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False)

    plain = {"b": [1, 2.5, None, True], "a": {"z": 'héllo \u2028 "quoted" \\', "y": -0.0}, "c": 10**18}
    assert compact_json(plain) == standard(plain)
    assert compact_json(plain, sort_keys=False) == standard(plain, sort_keys=False)
    assert compact_json(plain, sort_keys=False).startswith('{"b":')
    for refused in ({"n": 10**30}, {"s": "half a pair \ud800"}, {1: "int key"}):
        assert compact_json(refused) == standard(refused)
    assert compact_bytes({"s": "\ud800"}) == '{"s":"\ud800"}'.encode("utf-8", "surrogatepass")
    assert compact_json({"x": float("nan"), "y": float("inf")}) == '{"x":null,"y":null}'
    with pytest.raises(TypeError):  # not JSON data for either encoder: an error, never a guess
        compact_json({"set": {1, 2}})


def test_content_id_takes_a_spec_with_a_lone_surrogate() -> None:
    """Text that only the standard encoder writes (model output may hold half a surrogate pair) still gives an id,
    the same one every time."""
    data = tiny_data()
    data["services"]["mail"]["messages"][0]["body"] = "broken \ud800 text"
    spec = spec_from_data(data)
    assert content_id(spec) == content_id(spec_from_data(data)) and len(content_id(spec)) == 16
    assert '"broken \ud800 text"' in canonical_json(spec)
