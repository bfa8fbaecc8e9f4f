"""Worst-case time and memory of `coworkenv validate` on adversarial spec files.

Each file (see ``tests/adversarial_specs.py``: invalid UTF-8, 5,000-digit integers, 10k/100k-deep
YAML/JSON, a billion-laughs alias bomb, a megabyte of text aliased 300 times, a 6 MB spec, hostile
expressions and expressions hiding their size, a 10,000-step reference, overflowing weights, a key
given twice) is validated in a fresh
process, ``--repeat`` times; the script prints the median and worst wall time and peak RSS per
file, and the same for a plain example as the baseline (interpreter and import cost).

    python benchmarks/validate_adversarial.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from adversarial_specs import EXAMPLE, write_adversarial  # noqa: E402


def measure(path: Path) -> tuple[float, float, int]:
    """Seconds, peak RSS in MB and exit code of one `coworkenv validate PATH` in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-c", "from coworkenv.cli import main; main()", "validate", str(path)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if "Traceback" in stderr:
        raise SystemExit(f"{path.name}: validate crashed\n{stderr}")
    return seconds, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = {"baseline (example)": EXAMPLE, **write_adversarial(Path(tmp))}
        print(f"{'file':<22}{'rc':>4}{'median s':>10}{'worst s':>9}{'worst MB':>10}")
        worst = (0.0, 0.0)
        for name, path in files.items():
            runs = [measure(path) for _ in range(args.repeat)]
            secs, mbs = [r[0] for r in runs], [r[1] for r in runs]
            print(f"{name:<22}{runs[0][2]:>4}{statistics.median(secs):>10.2f}{max(secs):>9.2f}{max(mbs):>10.0f}")
            worst = (max(worst[0], max(secs)), max(worst[1], max(mbs)))
        print(f"worst case over adversarial files: {worst[0]:.2f} s, {worst[1]:.0f} MB")


if __name__ == "__main__":
    main()
