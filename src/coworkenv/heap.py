"""The heap alive before a long batch job, kept out of the cyclic collector's full scans while it runs.

Bank builds and rollouts make and drop millions of short-lived objects; every full collection
walked the whole long-lived heap again (modules, schemas, validated specs). Frozen, that heap is
skipped. A forked pool worker inherits the frozen state, so its collections also never write to
the parent's objects' headers, which would copy their memory pages one by one (copy-on-write).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Freeze the objects alive now for the duration of the block, then hand them back to the collector."""
    if gc.get_freeze_count():  # the caller froze its own heap: unfreezing after would undo that too
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
