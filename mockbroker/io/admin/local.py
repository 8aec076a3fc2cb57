"""The admin API without HTTP: a transport for :class:`mockbroker.admin.AdminClient` that runs
the same handlers as the HTTP server (:mod:`mockbroker.io.admin.api`) on the cluster's loop
thread, so a call answers with the same status and body as over HTTP, without a socket."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from mockbroker.io.admin.api import AdminApi

if TYPE_CHECKING:
    from mockbroker.io.runtime import ClusterRuntime


class LocalTransport:
    """Calls into a cluster running on ``loop`` (another thread's)."""

    def __init__(self, runtime: "ClusterRuntime", loop: asyncio.AbstractEventLoop, *,
                 timeout: float = 30.0):
        self._api = AdminApi(runtime)
        self._loop = loop
        self.timeout = timeout

    def __repr__(self) -> str:
        return "LocalTransport()"

    def call(self, method: str, path: str, query: dict[str, str] | None = None,
             body: bytes | None = None, timeout: float | None = None) -> tuple[int, Any]:
        """(status, JSON body) of ``method path``, as the HTTP server would answer it."""
        loop = self._loop
        if loop.is_closed() or not loop.is_running():
            raise ConnectionRefusedError("the cluster is stopped")
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            raise RuntimeError("the in-process admin client cannot wait for the cluster's loop "
                               "on that loop's own thread")
        coroutine = self._api.dispatch(method.upper(), path, dict(query or {}), body or b"")
        status, data = asyncio.run_coroutine_threadsafe(coroutine, loop).result(
            timeout or self.timeout)
        # through JSON text, as over HTTP: the caller gets its own copy, with string keys
        return status, json.loads(json.dumps(data))
