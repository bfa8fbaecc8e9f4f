"""A service declared as data in the spec: its tools behave as declared, and broken declarations are rejected."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from coworkenv.runtime import Environment
from coworkenv.spec import SpecError, canonical_json, spec_from_data
from coworkenv.verify.static import static_findings

BOOKS: dict[str, Any] = {
    "description": "a library catalogue",
    "collections": {
        "books": {
            "key": "isbn",
            "fields": {
                "isbn": {"type": "string", "required": True},
                "title": {"type": "string", "required": True},
                "from": {"type": "string"},  # a Python keyword: names are free text
                "tags": {"type": "array"},
                "published": {"type": "string"},
                "copies": {"type": "integer"},
                "lent_to": {"type": "string", "nullable": True},
            },
        },
        "loans": {"fields": {"isbn": {"type": "string"}, "who": {"type": "string"}}},
    },
    "tools": {
        "lib_list": {
            "op": "list",
            "collection": "books",
            "description": "List books",
            "params": {
                "tag": {"role": "equals", "field": "tags"},
                "year": {"role": "prefix", "field": "published"},
                "status": {"role": "equals", "field": "lent_to", "wildcard": "all"},
                "max": {"role": "limit", "type": "integer"},
                "page_token": {"role": "ignored"},
            },
        },
        "lib_search": {"op": "search", "collection": "books", "params": {"q": {"role": "text", "required": True}}},
        "lib_by_publisher": {
            "op": "list",
            "collection": "books",
            "params": {"publisher": {"role": "contains", "field": "from"}},
        },
        "lib_get": {"op": "get", "collection": "books", "params": {"isbn": {"role": "key", "required": True}}},
        "lib_lend": {
            "op": "create",
            "collection": "loans",
            "params": {"isbn": {"role": "set", "required": True}, "who": {"role": "set", "required": True}},
        },
        "lib_retag": {
            "op": "update",
            "collection": "books",
            "params": {"isbn": {"role": "key", "required": True}, "tags": {"role": "set", "type": "array"}},
        },
        "lib_withdraw": {
            "op": "update",
            "collection": "books",
            "params": {"isbn": {"role": "key", "required": True}},
            "values": {"copies": 0},
        },
        "lib_drop": {"op": "delete", "collection": "books", "params": {"isbn": {"role": "key", "required": True}}},
    },
}
RECORDS = [
    {"id": "111", "isbn": "111", "title": "Dune", "from": "Chilton Books", "tags": ["SF"], "published": "1965-08-01"},
    {
        "id": "222",
        "isbn": "222",
        "title": "Emma",
        "from": "John Murray",
        "tags": ["classic"],
        "published": "1815-12-23",
    },
    {"id": "333", "isbn": "333", "title": "Solaris", "tags": ["sf", "classic"], "copies": 2, "lent_to": None},
]


def spec_data(decl: dict[str, Any] | None = None, records: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "id": "books",
        "title": "Lend a book",
        "services": {"library": {"books": copy.deepcopy(records if records is not None else RECORDS)}},
        "declared_services": {"library": copy.deepcopy(decl or BOOKS)},
        "user": {"persona": "a reader", "opening": "Lend Solaris to Ann."},
        "checks": [{"id": "lent", "kind": "tool_called", "tool": "lib_lend"}],
        "reference": [{"call": "lib_lend", "args": {"isbn": "333", "who": "ann"}}, {"answer": "Lent."}],
    }


def call(env: Environment, tool: str, **args: Any) -> Any:
    obs = env.step({"tool_calls": [{"name": tool, "arguments": args}]})
    return json.loads(obs.messages[-1]["content"])


def test_declared_tools_list_search_get_create_update_delete() -> None:
    env = Environment(spec_from_data(spec_data()))
    ids = lambda out: [r["id"] for r in out["books"]]  # noqa: E731
    assert ids(call(env, "lib_list", tag="sf")) == ["111", "333"]  # equals: case-insensitive, list membership
    assert ids(call(env, "lib_list", year="1815")) == ["222"]  # prefix
    assert ids(call(env, "lib_list", max=1, page_token="x")) == ["111"]  # limit; ignored argument accepted
    assert ids(call(env, "lib_list", status="all")) == ["111", "222", "333"]  # a wildcard filters nothing
    assert ids(call(env, "lib_search", q="solaris CLASSIC")) == ["333"]  # every word, any text field
    assert ids(call(env, "lib_by_publisher", publisher="murray")) == ["222"]  # contains
    got = call(env, "lib_get", isbn="111")
    assert got == RECORDS[0]  # exactly the record's fields: nothing dropped, no defaults added
    assert call(env, "lib_lend", isbn="333", who="ann")["record"] == {"id": "loa-1", "isbn": "333", "who": "ann"}
    assert call(env, "lib_retag", isbn="222", tags=["romance"])["record"]["tags"] == ["romance"]
    assert call(env, "lib_withdraw", isbn="111")["record"]["copies"] == 0  # a declared constant
    assert call(env, "lib_drop", isbn="333") == {"deleted": True, "id": "333"}
    diff = env.workspace.diff()
    assert diff["library.books"]["removed"] == ["333"] and set(diff["library.books"]["changed"]) == {"111", "222"}
    assert diff["library.loans"]["added"][0]["who"] == "ann"
    env.reset()
    assert env.workspace.diff() == {} and call(env, "lib_get", isbn="333") == RECORDS[2]


def test_bad_calls_are_error_observations() -> None:
    env = Environment(spec_from_data(spec_data()))
    assert "no books record with id '999'" in call(env, "lib_get", isbn="999")["error"]
    assert "isbn: Field required" in call(env, "lib_get")["error"]
    assert "Extra inputs are not permitted" in call(env, "lib_get", isbn="111", title="x")["error"]
    assert "tags" in call(env, "lib_retag", isbn="111", tags="not a list")["error"]
    assert "nothing to update" in call(env, "lib_retag", isbn="111")["error"]
    assert env.workspace.diff() == {}


def test_the_agent_sees_the_declared_names_and_schemas() -> None:
    env = Environment(spec_from_data(spec_data()))
    schemas = {t["function"]["name"]: t["function"] for t in env.router.schemas()}
    assert list(schemas) == list(BOOKS["tools"])
    params = schemas["lib_list"]["parameters"]
    assert list(params["properties"]) == ["tag", "year", "status", "max", "page_token"] and "required" not in params
    assert (
        schemas["lib_get"]["parameters"]["required"] == ["isbn"] and schemas["lib_list"]["description"] == "List books"
    )


def test_same_spec_same_bytes_and_same_state_hash() -> None:
    a, b = spec_from_data(spec_data()), spec_from_data(spec_data())
    assert canonical_json(a) == canonical_json(b)
    hashes = []
    for spec in (a, b):
        env = Environment(spec)
        call(env, "lib_lend", isbn="333", who="ann")
        hashes.append(env.workspace.state_hash())
    assert hashes[0] == hashes[1] != Environment(a).workspace.state_hash()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("tools", "lib_get", "collection"), "shelves", "tools.lib_get: collection 'shelves' is not declared"),
        (("tools", "lib_get", "params", "isbn", "role"), "equals", "a get tool needs exactly one argument"),
        (("tools", "lib_lend", "params", "who", "field"), "borrower", "field 'borrower' is not a field of loans"),
        (("tools", "lib_search", "params", "q", "role"), "ignored", "a search tool needs an argument with role 'text'"),
        (("tools", "lib_list", "params", "max", "role"), "set", "role 'set' does not fit a list tool"),
        (("tools", "lib_list", "values"), {"copies": 1}, "only create and update tools set fields"),
        (("collections", "books", "key"), "barcode", "key: 'barcode' is not one of the fields"),
        (("tools", "lib_get", "op"), "eval", "op"),
        (("tools", "lib_retag", "params", "isbn", "role"), "set", "a update tool needs exactly one argument"),
        (("tools", "lib_drop", "params"), {}, "a delete tool needs exactly one argument with role 'key', has 0"),
        (("tools", "lib_list", "params", "tag", "match"), "any_token", "match 'any_token' is for 'text' arguments"),
        (("tools", "lib_search", "params", "q", "match"), "some", "match"),
        (("tools", "lib_list", "params", "tag", "field"), "genre", "field 'genre' is not a field of books"),
        (("collections", "books", "fields", "id"), {"type": "string"}, "'id' is every record's own key"),
    ],
)
def test_broken_declarations_are_rejected_naming_the_place(path: tuple[str, ...], value: Any, message: str) -> None:
    decl = copy.deepcopy(BOOKS)
    node = decl
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(SpecError, match=r"declared_services\.library") as err:
        spec_from_data(spec_data(decl))
    assert message in str(err.value)


def test_a_loose_text_argument_matches_any_word_or_pair_of_characters() -> None:
    decl = copy.deepcopy(BOOKS)
    records = copy.deepcopy(RECORDS)
    records[2]["title"] = "索拉里斯星"
    env = Environment(spec_from_data(spec_data(decl, records)))
    assert call(env, "lib_search", q="dune solaris")["books"] == []  # every word must occur
    assert [b["isbn"] for b in call(env, "lib_search", q="索拉")["books"]] == ["333"]
    decl["tools"]["lib_search"]["params"]["q"]["match"] = "any_token"
    env = Environment(spec_from_data(spec_data(decl, records)))
    assert [b["isbn"] for b in call(env, "lib_search", q="dune 里斯的书")["books"]] == ["111", "333"]
    assert call(env, "lib_search", q="zzz")["books"] == []


def test_a_declared_service_needs_fixtures_and_a_name_of_its_own() -> None:
    data = spec_data()
    data["services"] = {"mail": {"messages": []}}
    with pytest.raises(SpecError, match=r"declared_services: \['library'\] have no entry in services"):
        spec_from_data(data)
    data = spec_data()
    data["services"] = {"mail": {"messages": []}}
    data["declared_services"] = {"mail": data["declared_services"]["library"]}
    findings = static_findings(spec_from_data(data))
    assert (findings[0].where, findings[0].evidence) == ("declared_services.mail", "'mail' is a built-in service")


def test_a_declared_tool_may_not_shadow_a_tool_of_a_builtin_service_in_the_spec() -> None:
    decl = copy.deepcopy(BOOKS)
    decl["tools"]["mail_search"] = decl["tools"].pop("lib_search")
    data = spec_data(decl)
    assert static_findings(spec_from_data(data)) == []  # no mail service here: the name is free
    data["services"]["mail"] = {"messages": []}
    findings = static_findings(spec_from_data(data))
    assert [f.where for f in findings] == ["declared_services.library.tools.mail_search"]


@pytest.mark.parametrize(
    ("change", "evidence"),
    [
        ({"title": 7}, "library.books[0].title: Input should be a valid string"),
        ({"isbn": "999"}, "key '999' differs from the record's id '111'"),
        ({"shelf": "A"}, "library.books[0].shelf: Extra inputs are not permitted"),
        ({"lent_to": None, "title": None}, "library.books[0].title"),
    ],
)
def test_fixture_records_must_fit_the_declaration(change: dict[str, Any], evidence: str) -> None:
    records = copy.deepcopy(RECORDS)
    records[0].update(change)
    findings = static_findings(spec_from_data(spec_data(records=records)))
    assert len(findings) == 1 and findings[0].where == "services.library" and evidence in findings[0].evidence


def test_an_untyped_field_or_argument_takes_any_json_value_and_keeps_it() -> None:
    decl = copy.deepcopy(BOOKS)
    decl["collections"]["books"]["fields"]["notes"] = {}  # no type: any value, null included
    decl["tools"]["lib_note"] = {
        "op": "update",
        "collection": "books",
        "params": {"isbn": {"role": "key", "required": True}, "notes": {"role": "set", "type": None}},
    }
    records = copy.deepcopy(RECORDS)
    records[0]["notes"] = [{"shelf": 3, "ok": True}, None, 2.5]
    env = Environment(spec_from_data(spec_data(decl, records)))
    assert call(env, "lib_get", isbn="111")["notes"] == [{"shelf": 3, "ok": True}, None, 2.5]
    schemas = {t["function"]["name"]: t["function"] for t in env.router.schemas()}
    assert "type" not in schemas["lib_note"]["parameters"]["properties"]["notes"]  # the agent is told no type
    for value in ({"a": [1, "b"]}, 7, "text"):
        assert call(env, "lib_note", isbn="111", notes=value)["record"]["notes"] == value
    assert "nothing to update" in call(env, "lib_note", isbn="111", notes=None)["error"]  # null sets nothing
    assert call(env, "lib_get", isbn="111")["notes"] == "text"
    assert "tags" in call(env, "lib_retag", isbn="111", tags={"not": "a list"})["error"]  # a typed argument refuses
