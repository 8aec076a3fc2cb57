"""``mockbroker serve``: run brokers until SIGTERM or SIGINT.

With no flags it listens on ``127.0.0.1:9092`` (brokers after the first on the next ports) and
serves the admin API on an ephemeral port, announced in the ready line; ``--port 0`` makes
every broker's port ephemeral.  When every listener is up, one line goes to stdout:
``mockbroker ready bootstrap=HOST:PORT[,...] admin=http://HOST:PORT``.

Every flag can also come from the environment as ``MOCKBROKER_<FLAG>`` (``MOCKBROKER_BROKERS=3``),
which is how the container is configured; flags on the command line win.  Only variables that
name a flag are read.  Kubernetes' service links (a Service named ``mockbroker`` puts
``MOCKBROKER_PORT=tcp://10.96.0.12:9092``, ``MOCKBROKER_SERVICE_HOST`` and
``MOCKBROKER_PORT_9092_TCP*`` in every pod of its namespace) are recognised and ignored with a
note on stderr, as are other ``MOCKBROKER_*`` names that are no flag; a bad value in a
variable that is one is a one-line error naming the variable, and exit code 2.

Listening on every interface (``--host 0.0.0.0``) without ``--advertised-host`` advertises a
loopback name rather than the unroutable wildcard, and says so on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import sys
from typing import Any, Mapping

from mockbroker._version import __version__
from mockbroker.core.settings import SETTINGS, coerce, resolve_settings
from mockbroker.io.runtime import WILDCARD_HOSTS, ClusterRuntime


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        sys.stderr.write(f"mockbroker: error: {message}\n")
        sys.exit(2)


def _integer(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}") from None


def _positive(text: str) -> int:
    value = _integer(text, "expected a number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _port(text: str) -> int:
    value = _integer(text, "expected a port number")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {value}")
    return value


#: the first broker's port when no --port is given: Kafka's own
DEFAULT_PORT = 9092


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mockbroker", description="A Kafka-wire-compatible mock broker.")
    parser.add_argument("--version", action="version", version=f"mockbroker {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    serve = sub.add_parser("serve", help="run brokers until SIGTERM or SIGINT")
    serve.add_argument("--brokers", type=_positive, default=1)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=_port, default=DEFAULT_PORT,
                       help=f"first broker's port (the others follow it; default "
                            f"{DEFAULT_PORT}); 0 = ephemeral ports for every broker")
    serve.add_argument("--http-port", type=_port, default=0,
                       help="the admin API's port (default 0: ephemeral, announced in the "
                            "ready line)")
    serve.add_argument("--advertised-host", default=None,
                       help="host name clients are told to connect to (default: --host)")
    serve.add_argument("--topic", action="extend", default=[], type=_topics,
                       metavar="NAME:PARTITIONS[,NAME:PARTITIONS...]",
                       help="create topics at start (repeatable; a comma-separated list is how "
                            "MOCKBROKER_TOPIC names several)")
    kafka = serve.add_argument_group("Kafka broker settings (Kafka's names, dashes for dots)")
    for setting in SETTINGS.values():
        kafka.add_argument("--" + setting.name.replace(".", "-"), dest=setting.python_name,
                           default=None, metavar=setting.type.__name__.upper(),
                           help=f"default: {setting.default}")
    return parser


def _topics(text: str) -> list[tuple[str, int]]:
    # Kafka topic names never hold a comma, so a list is unambiguous.
    topics = []
    for item in text.split(","):
        name, sep, count = item.strip().rpartition(":")
        if not sep or not name or not count.isdigit() or int(count) < 1:
            raise argparse.ArgumentTypeError(f"expected NAME:PARTITIONS, got {text!r}")
        topics.append((name, int(count)))
    return topics


def advertised_host(host: str, advertised: str | None) -> str:
    """The host name clients are told to use: ``advertised`` if given, else ``host``, except
    that a wildcard bind address is replaced by a loopback name (with a note on stderr)."""
    if advertised:
        return advertised
    if host in WILDCARD_HOSTS:
        fallback = WILDCARD_HOSTS[host]
        sys.stderr.write(f"mockbroker: note: listening on {host or 'every interface'} without "
                         f"--advertised-host; advertising {fallback} (set --advertised-host or "
                         f"MOCKBROKER_ADVERTISED_HOST to the name clients use)\n")
        return fallback
    return host


class StartError(Exception):
    """A listener could not be opened (port in use, unknown host)."""


ENV_PREFIX = "MOCKBROKER_"
#: variables of the project's other parts (the Spark fixture's), never flags of serve
_OTHER_PARTS = ("MOCKBROKER_SPARK_",)
#: the names Kubernetes gives service links for a Service named mockbroker or mockbroker-<x>:
#: <NAME>_SERVICE_HOST, <NAME>_SERVICE_PORT[_<PORT NAME>],
#: <NAME>_PORT_<N>_<PROTO>[_PROTO|_PORT|_ADDR]
_SERVICE_LINK_NAME = re.compile(
    r"MOCKBROKER_(?:\w+_)?(?:SERVICE_(?:HOST|PORT)(?:_\w+)?|PORT_\d+_(?:TCP|UDP|SCTP)(?:_\w+)?)")
#: ... and the value of <NAME>_PORT, which is also how --port and --http-port are spelled
_SERVICE_LINK_VALUE = re.compile(r"(?:tcp|udp|sctp)://\S+:\d+", re.IGNORECASE)


def environment_variables(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """``MOCKBROKER_<FLAG>`` for every flag of ``serve``, with the flag's action."""
    serve = _serve_parser(parser)
    variables = {}
    for action in serve._actions:
        longs = [o for o in action.option_strings if o.startswith("--")]
        if longs and action.dest != "help":
            variables[ENV_PREFIX + longs[0][2:].upper().replace("-", "_")] = action
    return variables


def _serve_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return commands.choices["serve"]


def _is_service_link(name: str, value: str) -> bool:
    return bool(_SERVICE_LINK_NAME.fullmatch(name)) or (
        name.endswith("_PORT") and bool(_SERVICE_LINK_VALUE.fullmatch(value.strip())))


def _environment_defaults(parser: argparse.ArgumentParser, argv: list[str],
                          environ: Mapping[str, str]) -> None:
    """``serve``'s defaults from the MOCKBROKER_* variables that name one of its flags (the
    command line's flags win); notes on stderr for the rest, a one-line error naming the
    variable for a bad value."""
    if not argv or argv[0] != "serve":
        return
    variables = environment_variables(parser)
    defaults: dict[str, Any] = {}
    links, unknown = [], []
    for name, value in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX) or name.startswith(_OTHER_PARTS) or value == "":
            continue
        if _is_service_link(name, value):
            links.append(name)
        elif name in variables:
            action = variables[name]
            defaults[action.dest] = _environment_value(parser, name, value, action)
        else:
            unknown.append(name)
    if links:
        sys.stderr.write(f"mockbroker: note: ignoring {', '.join(links)}: Kubernetes service "
                         f"links of a Service named mockbroker, not settings (set "
                         f"enableServiceLinks: false in the pod spec to drop them)\n")
    if unknown:
        sys.stderr.write(f"mockbroker: note: ignoring {', '.join(unknown)}: no such setting "
                         f"(see mockbroker serve --help; {ENV_PREFIX}<FLAG> sets --<flag>)\n")
    _serve_parser(parser).set_defaults(**defaults)


def _environment_value(parser: argparse.ArgumentParser, name: str, value: str,
                       action: argparse.Action) -> Any:
    """What ``--flag value`` would have given ``action``, or exit 2 naming the variable."""
    flag = action.option_strings[-1]
    try:
        if action.dest in SETTINGS:  # a Kafka setting: checked now, kept as text like a flag
            coerce(SETTINGS[action.dest], value)
            return value
        if action.nargs == 0:  # a switch: MOCKBROKER_AUTHORIZER=true
            lowered = value.strip().lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no"):
                raise argparse.ArgumentTypeError(f"expected true or false, got {value!r}")
            return action.const if lowered in ("true", "1", "yes") else action.default
        converted = action.type(value) if action.type else value
        if action.choices is not None and converted not in action.choices:
            raise argparse.ArgumentTypeError(
                f"invalid choice {value!r} (choose from {', '.join(map(str, action.choices))})")
    except argparse.ArgumentTypeError as exc:
        parser.error(f"{name} ({flag}): {exc}")
    except (TypeError, ValueError) as exc:
        detail = str(exc) if action.dest in SETTINGS else f"invalid value {value!r}"
        parser.error(f"{name} ({flag}): {detail}")
    if isinstance(action, argparse._ExtendAction):
        return list(converted)
    if isinstance(action, argparse._AppendAction):
        return [converted]
    return converted


async def serve(args: argparse.Namespace) -> None:
    # Signals are caught from the start: a SIGTERM right after the ready line must still
    # close the listeners and exit 0.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    settings = {name: getattr(args, name) for name in SETTINGS
                if getattr(args, name, None) is not None}
    runtime = ClusterRuntime(brokers=args.brokers, host=args.host, port=args.port,
                             http_port=args.http_port,
                             advertised_host=advertised_host(args.host, args.advertised_host),
                             topics=dict(args.topic), settings=settings)
    try:
        await runtime.start()
    except OSError as exc:  # the runtime has closed whatever it had opened
        raise StartError(f"cannot listen on host {args.host!r}: {exc.strerror or exc}") from exc
    print(f"mockbroker ready bootstrap={runtime.bootstrap_servers} admin={runtime.admin_url}",
          flush=True)
    await stop.wait()
    await runtime.stop()


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    _environment_defaults(parser, argv, os.environ)
    args = parser.parse_args(argv)
    if args.command == "serve":
        try:
            resolve_settings({name: getattr(args, name) for name in SETTINGS
                              if getattr(args, name, None) is not None})
        except ValueError as exc:
            parser.error(str(exc))
        try:
            asyncio.run(serve(args))
        except StartError as exc:
            sys.stderr.write(f"mockbroker: error: {exc}\n")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
