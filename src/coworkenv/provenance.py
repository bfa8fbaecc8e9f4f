"""Which code made an output: the package version and a digest of the package's own files.

The version alone does not move between releases, so a run killed under one checkout and resumed under
another (a pulled fix, a local edit) would mix episodes of two codes in one store without a trace; the
digest (every source file, template and example spec of the package, by relative path) tells them apart.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("coworkenv")
except PackageNotFoundError:  # running from a source tree that was never installed
    VERSION = "0.0.0"

PACKAGE = os.path.dirname(os.path.abspath(__file__))
SUFFIXES = (".py", ".md", ".yaml")
"""The package's files that decide what it does: its code, the LLM prompt templates, the example specs."""


@cache
def code_version() -> str:
    """``<version>+<12 hex digits of the package's files' digest>``, computed once per process."""
    files = []
    for folder, subfolders, names in os.walk(PACKAGE):
        subfolders[:] = [d for d in subfolders if d != "__pycache__"]
        rel = os.path.relpath(folder, PACKAGE).replace(os.sep, "/")
        files += [(f"{rel}/{name}", os.path.join(folder, name)) for name in names if name.endswith(SUFFIXES)]
    digest = hashlib.sha256()
    for rel, path in sorted(files):
        with open(path, "rb") as fh:
            data = fh.read()
        digest.update(f"{rel}\0{len(data)}\0".encode())
        digest.update(data)
    return f"{VERSION}+{digest.hexdigest()[:12]}"
