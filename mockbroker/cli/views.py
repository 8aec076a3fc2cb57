"""``mockbroker groups`` and ``mockbroker topics``: a running broker's groups and topics in the
terminal, as Kafka's own tools print them, read from its admin API with the stdlib-only
:class:`~mockbroker.admin.AdminClient` (no broker is loaded).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING, Mapping

from mockbroker.cli.flags import _admin_token, _pem_file

if TYPE_CHECKING:
    from mockbroker.admin import AdminClient
    from mockbroker.adminapi.views import GroupView, TopicView


#: the admin API of the container (MOCKBROKER_HTTP_PORT=8080); ``serve`` itself takes an
#: ephemeral port unless given --http-port, shown as admin= in its ready line
DEFAULT_ADMIN_URL = "http://127.0.0.1:8080"
ADMIN_URL_VARIABLE = "MOCKBROKER_ADMIN_URL"
#: also what ``serve --admin-token`` reads: one variable sets the token on both sides
ADMIN_TOKEN_VARIABLE = "MOCKBROKER_ADMIN_TOKEN"
#: what Kafka's tools print where a value is missing
MISSING = "-"
#: how long a view waits for the admin API
_VIEW_TIMEOUT_S = 15.0

_ADMIN_EPILOG = f"""\
The admin API is found at --admin-url, else ${ADMIN_URL_VARIABLE}, else {DEFAULT_ADMIN_URL}
(the container's); mockbroker serve shows its own as admin= in the ready line.  An admin API
that requires a token (token= in the ready line) takes --token, else ${ADMIN_TOKEN_VARIABLE}.
An unreachable or refusing admin API: a one-line error and exit 1.
"""

_GROUPS_EPILOG = """\
Without --describe: one line per group with its type, state, number of members and
coordinator, as kafka-consumer-groups.sh --describe --state shows them.

With --describe GROUP: what kafka-consumer-groups.sh --describe --group GROUP prints, columns
GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID: a row for
each partition assigned to a member (members with the most partitions first, partitions by
topic and number), then one for each other partition the group has an offset for, with - for
its consumer.  CURRENT-OFFSET is the committed offset (- when none), LOG-END-OFFSET the high
watermark, LAG the difference.  On stderr, as Kafka's tool does: "Consumer group 'GROUP' has no
active members." for an empty group, a warning for one that is rebalancing.  An unknown group:
"Error: Consumer group 'GROUP' does not exist." on stderr, and exit 1.

""" + _ADMIN_EPILOG

_TOPICS_EPILOG = """\
One row per partition: TOPIC PARTITION LEADER REPLICAS ISR LOG-START-OFFSET HIGH-WATERMARK
LAST-STABLE-OFFSET RECORDS (records = high watermark - log start offset); internal topics
(__consumer_offsets, __transaction_state, __share_group_state) only with --internal.

""" + _ADMIN_EPILOG


def _admin_url(text: str) -> str:
    if not re.match(r"https?://[^/\s]+", text):
        raise argparse.ArgumentTypeError(
            f"expected http://HOST:PORT or https://HOST:PORT, got {text!r}")
    return text.rstrip("/")


def view_parsers(sub) -> None:
    """``groups`` and ``topics``, beside ``serve``."""
    groups = sub.add_parser(
        "groups", help="a running broker's groups (describe one as kafka-consumer-groups.sh)",
        description="List the groups of a running mockbroker, or describe one as Kafka's "
                    "kafka-consumer-groups.sh --describe does.",
        epilog=_GROUPS_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    groups.add_argument("--describe", metavar="GROUP", default=None,
                        help="the group's partitions, committed offsets, lag and consumers")
    topics = sub.add_parser(
        "topics", help="a running broker's topics, partition by partition",
        description="The topics of a running mockbroker, one row per partition.",
        epilog=_TOPICS_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    topics.add_argument("--internal", action="store_true",
                        help="include the internal topics (__consumer_offsets, ...)")
    for parser in (groups, topics):
        parser.add_argument("--admin-url", type=_admin_url, default=None, metavar="URL",
                            help=f"the admin API (default: ${ADMIN_URL_VARIABLE}, else "
                                 f"{DEFAULT_ADMIN_URL})")
        parser.add_argument("--token", type=_admin_token, default=None,
                            help=f"the admin API's token (default: ${ADMIN_TOKEN_VARIABLE})")
        parser.add_argument("--ca-location", type=_pem_file, default=None, metavar="PEM",
                            help="an HTTPS admin API: the CA to trust (ca= in the ready line)")


class ViewError(Exception):
    """What a view cannot show: the message is printed as it is, and the exit code is 1."""


def _view_client(parser: argparse.ArgumentParser, args: argparse.Namespace,
                 environ: Mapping[str, str]) -> AdminClient:
    """The admin client of --admin-url / --token, else of their variables (checked as the
    flags are: a bad value exits 2 naming the variable)."""
    from mockbroker.admin import AdminClient

    url, token = args.admin_url, args.token
    try:
        if url is None and environ.get(ADMIN_URL_VARIABLE):
            url = _admin_url(environ[ADMIN_URL_VARIABLE])
    except argparse.ArgumentTypeError as exc:
        parser.error(f"{ADMIN_URL_VARIABLE}: {exc}")
    try:
        if token is None and environ.get(ADMIN_TOKEN_VARIABLE):
            token = _admin_token(environ[ADMIN_TOKEN_VARIABLE])
    except argparse.ArgumentTypeError as exc:
        parser.error(f"{ADMIN_TOKEN_VARIABLE}: {exc}")
    return AdminClient(url or DEFAULT_ADMIN_URL, timeout=_VIEW_TIMEOUT_S, token=token,
                       ca_location=args.ca_location)


def _aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    """Columns as wide as their widest cell, two spaces apart; the last one unpadded."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return [("  ".join(cell.ljust(width) for cell, width in zip(row[:-1], widths))
             + "  " + row[-1]) for row in [header, *rows]]


def _capitalized(group_type: str) -> str:
    return group_type[:1].upper() + group_type[1:]  # Kafka's tools print Classic, Consumer


def list_groups(admin: AdminClient) -> list[str]:
    """``mockbroker groups``: a line per group (with a header line)."""
    groups = admin.groups()
    brokers = {b.id: f"{b.host}:{b.port}" for b in admin.brokers()}
    rows = [[g.group_id, _capitalized(g.type), g.state, str(g.members),
             f"{brokers.get(g.coordinator, MISSING)}  ({g.coordinator})"] for g in groups]
    return _aligned(["GROUP", "TYPE", "STATE", "#MEMBERS", "COORDINATOR (ID)"], rows)


#: states in which Kafka's tool warns that the group is rebalancing (classic and consumer)
_REBALANCING = ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling")


def _partition_rows(group: GroupView, topics: dict[str, TopicView]) -> list[list[str]]:
    """kafka-consumer-groups.sh --describe's rows, in its order: each member with partitions
    (most partitions first; a tie keeps the group's order), its partitions by topic and number;
    then the partitions with a committed offset and no consumer."""
    def row(topic: str, partition: int, consumer: list[str]) -> list[str]:
        committed = group.offsets.get(topic, {}).get(partition)
        found = topics.get(topic)
        log_end = found.partitions[partition].high_watermark \
            if found is not None and partition < len(found.partitions) else None
        lag = group.lag.get(topic, {}).get(partition)  # GET /groups/{id}'s, as /metrics
        shown = [MISSING if v is None else str(v) for v in (committed, log_end, lag)]
        return [group.group_id, topic, str(partition), *shown, *consumer]

    def partitions(assignment: dict[str, list[int]] | None) -> list[tuple[str, int]]:
        return sorted((t, p) for t, ps in (assignment or {}).items() for p in ps)

    rows, assigned = [], set()
    members = sorted((m for m in group.members if partitions(m.assignment)),
                     key=lambda m: -len(partitions(m.assignment)))
    for member in members:
        for topic, partition in partitions(member.assignment):
            assigned.add((topic, partition))
            rows.append(row(topic, partition,
                            [member.member_id, member.client_host, member.client_id]))
    for topic, partition in partitions(
            {t: list(ps) for t, ps in group.offsets.items()}):
        if (topic, partition) not in assigned:
            rows.append(row(topic, partition, [MISSING] * 3))
    return rows


def describe_group(admin: AdminClient, group_id: str) -> tuple[list[str], list[str]]:
    """``mockbroker groups --describe GROUP``: (stdout lines, stderr lines) as Kafka's
    ``kafka-consumer-groups.sh --describe --group GROUP`` prints them."""
    from mockbroker.admin import AdminError

    try:
        group = admin.group(group_id)
    except AdminError as exc:
        if exc.status == 404:
            raise ViewError(f"Error: Consumer group '{group_id}' does not exist.") from None
        raise
    if group.state == "Dead":
        raise ViewError(f"Error: Consumer group '{group_id}' does not exist.")
    notes = []
    if group.state == "Empty":
        notes = ["", f"Consumer group '{group_id}' has no active members."]
    elif group.state in _REBALANCING:
        notes = ["", f"Warning: Consumer group '{group_id}' is rebalancing."]
    rows = _partition_rows(group, {t.name: t for t in admin.topics(internal=True)})
    if not rows:
        return [], notes  # Kafka's tool prints no table without a row
    # Kafka's widths: at least 15 for the group, topic, consumer id and host, 10 for the
    # partition and 15 for the offsets and lag; the client id last, unpadded
    widths = [max(15, *(len(r[i]) for r in rows)) if i in (0, 1, 6, 7) else
              (10 if i == 2 else 15) for i in range(8)]
    header = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
              "CONSUMER-ID", "HOST", "CLIENT-ID"]
    lines = [" ".join(cell.ljust(width) for cell, width in zip(r[:-1], widths)) + " " + r[-1]
             for r in [header, *rows]]
    return ["", *lines], notes  # a blank line first, as Kafka's tool prints


def list_topics(admin: AdminClient, internal: bool = False) -> list[str]:
    """``mockbroker topics``: a line per partition (with a header line)."""
    rows = [[t.name, str(p.partition), str(p.leader), ",".join(map(str, p.replicas)),
             ",".join(map(str, p.isr)), str(p.log_start_offset), str(p.high_watermark),
             str(p.last_stable_offset), str(p.records)]
            for t in admin.topics(internal=internal) for p in t.partitions]
    return _aligned(["TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR", "LOG-START-OFFSET",
                     "HIGH-WATERMARK", "LAST-STABLE-OFFSET", "RECORDS"], rows)


def view_command(parser: argparse.ArgumentParser, args: argparse.Namespace,
                 environ: Mapping[str, str]) -> int:
    """Run ``groups`` or ``topics``: 0, or 1 after a one-line error on stderr."""
    from mockbroker.admin import AdminError

    admin = _view_client(parser, args, environ)
    try:
        errors: list[str] = []
        if args.command == "topics":
            out = list_topics(admin, args.internal)
        elif args.describe is not None:
            out, errors = describe_group(admin, args.describe)
        else:
            out = list_groups(admin)
    except ViewError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    except AdminError as exc:
        sys.stderr.write(f"mockbroker: error: the admin API at {admin.url} refused: "
                         f"{exc.message} (HTTP {exc.status})\n")
        return 1
    except (OSError, ValueError) as exc:  # URLError, a refused connection, a timeout
        reason = getattr(exc, "reason", None) or exc
        sys.stderr.write(f"mockbroker: error: cannot reach the admin API at {admin.url}: "
                         f"{reason}\n")
        return 1
    for line in errors:
        sys.stderr.write(line + "\n")
    sys.stderr.flush()
    for line in out:
        sys.stdout.write(line + "\n")
    return 0


