"""What installing mockbroker costs a pytest run that never uses Kafka.

The plugin is registered through ``pytest11`` entry points, so pytest loads it in every project
of the environment.  This measures the wall time of ``pytest --collect-only -q`` on a tiny
project (one test file, no Kafka) in its own process, with the plugins as installed and with
them blocked (``-p no:mockbroker -p no:mockbroker_spark``), alternating the two, and prints the
medians, their difference and their ratio (with / without; 1.0 is free).  Target: the
difference is at most 50 ms.

    .venv/bin/python bench/plugin_overhead.py [--runs 15]
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

TINY_TESTS = '''
def test_one():
    assert 1 + 1 == 2


def test_two():
    assert "a" * 2 == "aa"
'''

BLOCKED = ["-p", "no:mockbroker", "-p", "no:mockbroker_spark"]


def run_once(project: Path, extra: list[str]) -> float:
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
               *extra]
    started = time.perf_counter()
    result = subprocess.run(command, cwd=project, capture_output=True, text=True,
                            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    elapsed = time.perf_counter() - started
    if result.returncode != 0 or "2 tests collected" not in result.stdout:
        raise SystemExit(f"pytest failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each setup (default 15)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="plugin-overhead-") as tmp:
        project = Path(tmp)
        (project / "test_tiny.py").write_text(TINY_TESTS)
        (project / "pytest.ini").write_text("[pytest]\n")
        run_once(project, [])  # warm the file cache and bytecode of both setups
        run_once(project, BLOCKED)
        with_plugin, without = [], []
        for i in range(args.runs):  # alternating which goes first, so drift hits both alike
            if i % 2:
                without.append(run_once(project, BLOCKED))
            with_plugin.append(run_once(project, []))
            if not i % 2:
                without.append(run_once(project, BLOCKED))
    on, off = statistics.median(with_plugin), statistics.median(without)
    print(f"pytest --collect-only on a project without Kafka, median of {args.runs} runs each")
    print(f"  with the mockbroker plugins:    {on * 1000:7.1f} ms")
    print(f"  without (-p no:mockbroker ...): {off * 1000:7.1f} ms")
    print(f"  overhead: {(on - off) * 1000:+.1f} ms (target <= 50 ms); "
          f"ratio with/without: {on / off:.3f}")


if __name__ == "__main__":
    main()
