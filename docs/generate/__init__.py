"""Reference pages generated from the code when the docs site is built, so they cannot drift from it."""

from __future__ import annotations

from collections.abc import Callable

from .cli_page import cli_page
from .findings_page import findings_page
from .schema_pages import checks_page, spec_page

PAGES: dict[str, Callable[[], str]] = {
    "reference/spec.md": spec_page,
    "reference/checks.md": checks_page,
    "reference/cli.md": cli_page,
    "reference/findings.md": findings_page,
}
"""Each generated page's path in the site, with the function that writes its Markdown."""
