"""The admin API's server as ``mockbroker serve`` starts it: listening at once, its HTTP
application loading beside the brokers, a call made meanwhile answered once it serves, an
application that cannot load refusing callers rather than leaving them waiting, and waits in
progress answered when the cluster stops."""

from __future__ import annotations

import asyncio
import json
import socket
import threading

import pytest

from mockbroker import AdminClient, AdminError, MockCluster
from mockbroker.io.admin import server as admin_server
from mockbroker.io.runtime import ClusterRuntime
from tests.clients.helpers import wait_for


async def _get(port: int, path: str) -> tuple[int, dict]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    raw = await asyncio.wait_for(reader.read(), timeout=60)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_a_call_made_while_the_application_loads_is_answered():
    async def scenario():
        runtime = ClusterRuntime(brokers=2)
        await runtime.start(wait_for_admin=False)
        try:
            # sent at once: it waits in the socket's backlog, not refused
            status, body = await _get(runtime.admin.port, "/brokers")
            assert status == 200 and [b["id"] for b in body] == [0, 1]
            await runtime.admin.up()
        finally:
            await runtime.stop()

    asyncio.run(scenario())


def test_an_application_that_cannot_load_closes_the_socket(monkeypatch, caplog):
    monkeypatch.setattr(admin_server, "APPLICATION", "mockbroker.io.no_such_module")

    async def scenario() -> int:
        runtime = ClusterRuntime()
        await runtime.start(wait_for_admin=False)
        port = runtime.admin.port
        try:
            with pytest.raises(ModuleNotFoundError, match="no_such_module"):
                await runtime.admin.up()
            with pytest.raises(ConnectionRefusedError):  # refused, not left waiting
                await asyncio.open_connection("127.0.0.1", port)
        finally:
            await runtime.stop()
        return port

    port = asyncio.run(scenario())
    assert f"the admin API on port {port} did not start" in caplog.text


def test_bind_listens_on_one_port_for_every_address_of_the_host():
    sockets = admin_server.bind("localhost", 0)
    try:
        ports = {sock.getsockname()[1] for sock in sockets}
        assert len(ports) == 1 and all(sock.getblocking() is False for sock in sockets)
        families = {sock.family for sock in sockets}
        expected = {info[0] for info in socket.getaddrinfo("localhost", 0,
                                                           type=socket.SOCK_STREAM)}
        assert families == expected
        with socket.create_connection(("127.0.0.1", ports.pop()), timeout=5):
            pass  # it listens: the connection is accepted into the backlog
    finally:
        for sock in sockets:
            sock.close()


def test_a_port_in_use_is_an_os_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError):
            admin_server.bind("127.0.0.1", taken.getsockname()[1])


def test_waits_in_progress_are_answered_when_the_cluster_stops():
    # a wait that outlives its cluster would hold the stop (aiohttp lets a handler finish) and
    # leave its caller waiting out the timeout for an answer that cannot come
    cluster = MockCluster().start()
    runtime = cluster._started()
    ended: dict[str, AdminError] = {}

    def wait(name: str, admin: AdminClient) -> None:
        try:
            admin.wait_for_group("nobody", members=1, timeout=600)
        except AdminError as exc:
            ended[name] = exc

    try:
        waiters = [threading.Thread(target=wait, args=("http", AdminClient(cluster.admin_url)),
                                    daemon=True),
                   threading.Thread(target=wait, args=("in-process", cluster.admin),
                                    daemon=True)]
        for waiter in waiters:
            waiter.start()
        wait_for(lambda: cluster.call(lambda: len(runtime.on_stop)) == 2,
                 "both waits to be in progress")
        stopper = threading.Thread(target=cluster.stop, daemon=True)
        stopper.start()
        for thread in (stopper, *waiters):
            thread.join(60)
            assert not thread.is_alive(), "the stop, or a wait, never returned"
    finally:
        cluster.stop()
    assert sorted(ended) == ["http", "in-process"]
    for exc in ended.values():
        assert exc.status == 503
        assert exc.message == ("the cluster stopped while waiting for group 'nobody' to be "
                               "Stable with 1 member; last seen: no group 'nobody'")
