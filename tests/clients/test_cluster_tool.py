"""Brokers unregistered through Kafka's own tool: ``kafka-cluster.sh`` (``ClusterTool``:
``unregister``, ``list-endpoints``) and what Metadata and the admin API show afterwards.

On both targets a broker id nobody registered is refused with the tool's message and exit
code, and ``list-endpoints`` lists every running broker as unfenced.  Unregistering a broker
(stopped, or still running) and starting it again takes several brokers, so runs on three
(``lifecycle_target``: three mockbrokers, or the run's three-node Kafka).
"""

from __future__ import annotations

import re

from confluent_kafka.admin import AdminClient

import wire
from tests.clients.helpers import RDKAFKA_LOG, TIMEOUT_S, ToolRun, run_kafka_tool, wait_for
from tests.real_kafka import ask

CLUSTER_TOOL = "org.apache.kafka.tools.ClusterTool"
JVM_TIMEOUT_S = 120
HEADER = ["ID", "HOST", "PORT", "RACK", "STATE", "ENDPOINT_TYPE"]


def cluster_tool(bootstrap: str, command: str, *args: str) -> ToolRun:
    """(exit code, stdout, stderr lines) of ``kafka-cluster.sh COMMAND``, which may refuse;
    its connection options follow the command."""
    return run_kafka_tool(CLUSTER_TOOL, command, "--bootstrap-server", bootstrap, *args,
                          timeout=JVM_TIMEOUT_S)


def endpoints(bootstrap: str, *flags: str) -> dict[int, str]:
    """``list-endpoints``: broker id -> STATE, each row checked against the header."""
    code, out, err = cluster_tool(bootstrap, "list-endpoints", *flags)
    assert code == 0, err
    header, *rows = [line.split() for line in out.splitlines()]
    assert header == HEADER
    found = {}
    for row in rows:  # a broker without a rack prints "null" there
        node, host, port, rack, state, kind = row
        assert (kind, rack) == ("broker", "null") and int(port) > 0 and host, row
        found[int(node)] = state
    return found


def metadata_brokers(bootstrap: str) -> list[int]:
    admin = AdminClient({"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG})
    return sorted(admin.list_topics(timeout=TIMEOUT_S).brokers)


def test_an_unknown_broker_id_is_refused_and_running_brokers_are_unfenced(target):
    code, out, err = cluster_tool(target.bootstrap_servers, "unregister", "--id", "99")
    assert (code, out) == (1, "")
    assert err[0] == ("org.apache.kafka.common.errors.BrokerIdNotRegisteredException: "
                      "Broker ID 99 is not currently registered")
    listed = endpoints(target.bootstrap_servers)
    assert listed and set(listed.values()) == {"unfenced"}
    assert sorted(listed) == metadata_brokers(target.bootstrap_servers)


def test_a_broker_unregistered_is_gone_until_it_starts_again(lifecycle_target):
    target = lifecycle_target
    orders = target.create_topic("orders", 3)
    bootstrap = target.bootstrap_servers.split(",")[0]
    target.stop_broker(2)
    assert endpoints(bootstrap, "--include-fenced-brokers") == \
        {0: "unfenced", 1: "unfenced", 2: "fenced"}
    code, out, _ = cluster_tool(bootstrap, "unregister", "--id", "2")
    assert (code, out) == (0, "Broker 2 is no longer registered.\n")
    assert endpoints(bootstrap, "--include-fenced-brokers") == {0: "unfenced", 1: "unfenced"}
    code, _, err = cluster_tool(bootstrap, "unregister", "--id", "2")
    assert code == 1 and re.search(r"Broker ID 2 is not currently registered$", err[0])

    # a running broker: it keeps its listener, but nothing is led from it any more
    code, out, _ = cluster_tool(bootstrap, "unregister", "--id", "1")
    assert (code, out) == (0, "Broker 1 is no longer registered.\n")
    wait_for(lambda: metadata_brokers(bootstrap) == [0], "broker 1 out of Metadata")
    target.settled(lambda: set(target.leaders(orders).values()), {0}, "broker 0 leading")
    host, port = target.address(1)
    assert ask(port, 18, 3, wire.request_class(18)(
        client_software_name="t", client_software_version="1"), host).error_code == 0

    target.stop_broker(1)  # a restart registers both again
    target.start_broker(1)
    target.start_broker(2)
    assert endpoints(bootstrap) == {0: "unfenced", 1: "unfenced", 2: "unfenced"}
    wait_for(lambda: metadata_brokers(bootstrap) == [0, 1, 2], "every broker in Metadata")
