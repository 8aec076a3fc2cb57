"""``mockbroker serve``: run brokers until SIGTERM or SIGINT.

Every flag can also come from the environment as ``MOCKBROKER_<FLAG>`` (``MOCKBROKER_BROKERS=3``),
which is how the container is configured.  When every listener is up, one line goes to stdout:
``mockbroker ready bootstrap=HOST:PORT[,...] admin=http://HOST:PORT``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

from mockbroker.core.settings import SETTINGS, resolve_settings
from mockbroker.io.runtime import ClusterRuntime


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
    serve.add_argument("--advertised-host", default=None)
    serve.add_argument("--topic", action="append", default=[], type=_topic, metavar="NAME:PARTITIONS",
                       help="create a topic at start (repeatable)")
    kafka = serve.add_argument_group("Kafka broker settings (Kafka's names, dashes for dots)")
    for setting in SETTINGS.values():
        kafka.add_argument("--" + setting.name.replace(".", "-"), dest=setting.python_name,
                           default=None, metavar=setting.type.__name__.upper(),
                           help=f"default: {setting.default}")
    return parser


def _topic(text: str) -> tuple[str, int]:
    name, sep, count = text.rpartition(":")
    if not sep or not name or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"expected NAME:PARTITIONS, got {text!r}")
    return name, int(count)


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
                             http_port=args.http_port, advertised_host=args.advertised_host,
                             topics=dict(args.topic), settings=settings)
    await runtime.start()
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
        asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
