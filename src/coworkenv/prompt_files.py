"""Prompt templates shipped as package data: each package keeps its prompts in ``templates/NAME.md``.

Prompts live in files, not code, so they can be read, diffed and edited as text; ``string.Template``
(``$name`` placeholders) fills them, so a value holding braces or dollar signs goes in verbatim.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template


@cache
def package_template(package: str, name: str) -> Template:
    """``templates/<name>.md`` of ``package`` (read once per process)."""
    return Template(resources.files(package).joinpath("templates", f"{name}.md").read_text(encoding="utf-8"))
