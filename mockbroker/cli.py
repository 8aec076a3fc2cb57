"""``mockbroker serve``: run brokers until SIGTERM or SIGINT.

Every flag can also come from the environment as ``MOCKBROKER_<FLAG>`` (``MOCKBROKER_BROKERS=3``),
which is how the container is configured.  When every listener is up, one line goes to stdout:
``mockbroker ready bootstrap=HOST:PORT[,...] admin=http://HOST:PORT``.

Listening on every interface (``--host 0.0.0.0``) without ``--advertised-host`` advertises a
loopback name rather than the unroutable wildcard, and says so on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

from mockbroker.core.settings import SETTINGS, resolve_settings
from mockbroker.io.runtime import WILDCARD_HOSTS, ClusterRuntime


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        sys.stderr.write(f"mockbroker: error: {message}\n")
        sys.exit(2)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mockbroker", description="A Kafka-wire-compatible mock broker.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    serve = sub.add_parser("serve", help="run brokers until SIGTERM or SIGINT")
    serve.add_argument("--brokers", type=_positive, default=1)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=_port, default=0,
                       help="first broker's port (the others follow it); 0 = ephemeral")
    serve.add_argument("--http-port", type=_port, default=0)
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


def _environment_defaults(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """Flags from MOCKBROKER_* variables, placed before the command line's own flags."""
    if not argv or argv[0] != "serve":
        return argv
    extra = []
    for name, value in os.environ.items():
        if name.startswith("MOCKBROKER_") and value != "":
            flag = "--" + name[len("MOCKBROKER_"):].lower().replace("_", "-")
            extra += [flag, value]
    return [argv[0], *extra, *argv[1:]]


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
    args = parser.parse_args(_environment_defaults(parser, argv))
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
