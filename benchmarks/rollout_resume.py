"""Rollout resume start-up: the time :meth:`RolloutStore.open` takes on a store of N finished episodes.

A resumed run reads every stored line for the keys it must skip; the target is <= 2 s at 10,000 lines.
The store is built from one oracle episode of the example bank, its line repeated under distinct keys
(a real record, some KB of trajectory per line), plus a torn last line as a killed run leaves it.
Each size is timed ``--rounds`` times (process CPU seconds and wall seconds; medians printed), with
the load average beside them: the machine may be shared.

    python benchmarks/rollout_resume.py [--lines 10000 100000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from coworkenv.rollout import rollout_bank
from coworkenv.rollout.store import EPISODES_FILE, RolloutStore
from coworkenv.storage import json_text

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def sample_line(work: Path) -> dict[str, object]:
    """One real store line: an oracle episode of the first example spec."""
    spec = sorted(EXAMPLES.glob("*.yaml"))[0]
    rollout_bank(spec, "oracle", 1, work / "one", progress=False)
    line: dict[str, object] = json.loads((work / "one" / EPISODES_FILE).read_text(encoding="utf-8").splitlines()[0])
    return line


def build_store(folder: Path, line: dict[str, object], n: int) -> None:
    folder.mkdir(parents=True)
    spec_id = str(line["spec_id"])
    with open(folder / EPISODES_FILE, "w", encoding="utf-8") as fh:
        for sample in range(n):
            fh.write(json_text(line | {"key": f"{spec_id}#{sample}", "sample": sample}) + "\n")
        fh.write('{"key": "torn')


def time_open(folder: Path, n: int) -> tuple[float, float]:
    """CPU and wall seconds of one ``open`` (on a copy of the store, as ``open`` drops the torn line)."""
    copy = folder.with_name(folder.name + "-open")
    copy.mkdir()
    data = (folder / EPISODES_FILE).read_bytes()
    (copy / EPISODES_FILE).write_bytes(data)
    cpu, wall = time.process_time(), time.perf_counter()
    outcomes = RolloutStore(copy).open({})
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert len(outcomes) == n, f"{len(outcomes)} outcomes read back of {n}"
    (copy / EPISODES_FILE).unlink()
    copy.rmdir()
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        line = sample_line(work)
        print(f"line: {len(json_text(line))} bytes of JSON")
        for n in args.lines:
            store = work / f"store-{n}"
            build_store(store, line, n)
            times = [time_open(store, n) for _ in range(args.rounds)]
            cpu = statistics.median(t[0] for t in times)
            wall = statistics.median(t[1] for t in times)
            load = os.getloadavg()[0]
            mb = (store / EPISODES_FILE).stat().st_size / 1e6
            print(
                f"{n:>7} lines ({mb:.0f} MB): open median {cpu:.2f} s CPU, {wall:.2f} s wall "
                f"({cpu / n * 1e6:.0f} us CPU a line); load average {load:.1f}; target <= 2 s at 10,000"
            )


if __name__ == "__main__":
    main()
