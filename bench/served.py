"""``mockbroker serve`` in its own process, for the benches: a broker that shares no interpreter
(and no GIL) with the clients measuring it.

    with served(brokers=3) as broker:
        broker.bootstrap, broker.admin, broker.pid
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Iterator

READY = "mockbroker ready "


@dataclass(frozen=True)
class ServedBroker:
    bootstrap: str
    admin: str
    pid: int


@contextlib.contextmanager
def served(*flags: str, brokers: int = 1) -> Iterator[ServedBroker]:
    """A cluster of ``brokers`` on ephemeral ports, with any other ``serve`` flags; stopped with
    SIGTERM (killed if it does not stop in 10 s)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockbroker.cli", "serve", "--brokers", str(brokers),
         "--port", "0", "--http-port", "0", *flags],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        if not line.startswith(READY):
            raise SystemExit(f"mockbroker serve did not start (exit {proc.poll()}): {line!r}")
        fields = dict(part.split("=", 1) for part in line.split()[2:])
        yield ServedBroker(fields["bootstrap"], fields["admin"], proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
