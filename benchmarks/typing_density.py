"""How much of the package is typed ``Any``: occurrences of the word per 1,000 lines, per package.

A package is a folder under ``src/coworkenv`` (the modules at the top together count as one,
``top-level``). ``Any`` is counted as a word, in code and comments alike, as ``grep -w`` does;
``tests/test_typing_density.py`` holds each package to a ceiling.

    python benchmarks/typing_density.py
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

SOURCE = Path(__file__).resolve().parent.parent / "src" / "coworkenv"
ANY = re.compile(r"\bAny\b")
TOP_LEVEL = "top-level"


@dataclass
class Density:
    """``Any`` occurrences and lines of one package's modules."""

    anys: int = 0
    lines: int = 0

    @property
    def per_kloc(self) -> float:
        return 1000 * self.anys / self.lines if self.lines else 0.0


def densities(root: Path = SOURCE) -> dict[str, Density]:
    """Each package's density, and the whole package's under ``"all"``."""
    out: dict[str, Density] = {}
    total = Density()
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        package = parts[0] if len(parts) > 1 else TOP_LEVEL
        text = path.read_text(encoding="utf-8")
        found = out.setdefault(package, Density())
        for d in (found, total):
            d.anys += len(ANY.findall(text))
            d.lines += text.count("\n")
    out["all"] = total
    return out


def main() -> None:
    table = Table("package", "Any", "lines", "Any per 1,000 lines")
    for name, d in sorted(densities().items(), key=lambda item: (item[0] == "all", -item[1].per_kloc)):
        table.add_row(name, str(d.anys), str(d.lines), f"{d.per_kloc:.1f}")
    Console().print(table)


if __name__ == "__main__":
    main()
