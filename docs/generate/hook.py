"""MkDocs hook (named in mkdocs.yml): adds the generated reference pages to the site's files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generate import PAGES


def on_files(files: Files, config: Any) -> Files:
    """Write every generated page into the build's files, replacing a hand-made one of the same path."""
    for path, make in PAGES.items():
        if files.get_file_from_path(path) is not None:
            files.remove(files.get_file_from_path(path))
        files.append(File.generated(config, path, content=make()))
    return files
