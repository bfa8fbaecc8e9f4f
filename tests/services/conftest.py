"""Shared checks for the service tests."""

from __future__ import annotations

from collections.abc import Callable

import jsonschema
import pytest

from coworkenv.services.base import Service, ToolError


def _check_tools(cls: type[Service], expected: dict[str, str]) -> None:
    """Every tool is exposed as <service>_<name>, has the expected kind, a description and a valid schema."""
    tools = cls.tools()
    assert {name: info.kind for name, info in tools.items()} == expected
    for name, info in tools.items():
        assert info.description and "\n" not in info.description
        schema = info.schema()
        assert schema["type"] == "function" and schema["function"]["name"] == name
        params = schema["function"]["parameters"]
        jsonschema.Draft202012Validator.check_schema(params)
        assert params["type"] == "object" and isinstance(params["properties"], dict)
        assert callable(getattr(cls, info.method))


@pytest.fixture
def check_tools() -> Callable[[type[Service], dict[str, str]], None]:
    return _check_tools


def _rejected(svc: Service, method: str, args: dict, match: str) -> None:
    """The tool raises a ToolError saying ``match`` and leaves every collection as it was."""
    before = {k: dict(v) for k, v in svc.db.items()}
    with pytest.raises(ToolError, match=match):
        getattr(svc, method)(**args)
    assert {k: dict(v) for k, v in svc.db.items()} == before


@pytest.fixture
def rejected() -> Callable[[Service, str, dict, str], None]:
    return _rejected
