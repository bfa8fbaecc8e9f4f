"""The base of every spec model: unknown fields are errors, so a typo in a spec file is reported."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SpecModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
