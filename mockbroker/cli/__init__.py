"""``mockbroker serve``: run brokers until SIGTERM or SIGINT; ``mockbroker groups`` and
``mockbroker topics``: a running broker's groups and topics in the terminal (see
:func:`~mockbroker.cli.views.view_command`), read from its admin API.

With no flags it listens on ``127.0.0.1:9092`` (brokers after the first on the next ports) and
serves the admin API on an ephemeral port, announced in the ready line; ``--port 0`` makes
every broker's port ephemeral.  When every listener is up, one line goes to stdout (see
:data:`READY_LINE`):
``mockbroker ready bootstrap=HOST:PORT[,...] admin=http://HOST:PORT`` followed, when they
apply, by `` listeners=PROTOCOL://HOST:PORT,...`` (several listeners), `` ca=PATH`` (TLS) and
`` token=TOKEN`` (an admin API that requires a token).

Security: ``--security-protocol`` (one listener) or ``--listener`` (repeatable: several at once,
each a protocol on its own ports), ``--sasl-mechanism``, ``--user NAME:PASSWORD``,
``--super-user``, ``--authorizer``, ``--allow-everyone-if-no-acl-found``, ``--ssl-client-auth``,
``--connections-max-reauth-ms`` and the user's own certificate (``--ssl-certificate-location``,
``--ssl-key-location``, ``--ssl-ca-location``; without them a CA is made at start).  The admin
API requires ``Authorization: Bearer TOKEN`` when it listens off loopback (a token is made and
shown in the ready line) or is given ``--admin-token``; ``--admin-tls`` serves it over HTTPS.

Every flag can also come from the environment as ``MOCKBROKER_<FLAG>`` (``MOCKBROKER_BROKERS=3``),
which is how the container is configured; flags on the command line win.  Only variables that
name a flag are read.  Kubernetes' service links (a Service named ``mockbroker`` puts
``MOCKBROKER_PORT=tcp://10.96.0.12:9092``, ``MOCKBROKER_SERVICE_HOST`` and
``MOCKBROKER_PORT_9092_TCP*`` in every pod of its namespace) are recognised and ignored with a
note on stderr, as are other ``MOCKBROKER_*`` names that are no flag; a bad value in a
variable that is one is a one-line error naming the variable, and exit code 2.

Listening on every interface (``--host 0.0.0.0``) without ``--advertised-host`` advertises a
loopback name rather than the unroutable wildcard, and says so on stderr.

The package, by job: :mod:`.flags` (``serve``'s flags and their environment variables),
:mod:`.serve` (running the brokers, the ready line), :mod:`.views` (the terminal views).  It
imports the admin client and, for ``serve`` only, the runtime; nothing imports it.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys

from mockbroker._version import __version__
from mockbroker.cli.flags import _environment_defaults, _Parser, add_serve_flags
from mockbroker.cli.serve import READY_LINE
from mockbroker.cli.views import view_command, view_parsers

# What a command needs is imported when it runs: --version, --help and the terminal views never
# load the broker (its core, the codec, aiohttp); only serve's flags load the settings' tables.


def build_parser(serve_flags: bool = True) -> argparse.ArgumentParser:
    """The command line; ``serve_flags=False`` leaves ``serve``'s flags out, which saves loading
    the settings' tables when the command is not ``serve``."""
    parser = _Parser(prog="mockbroker", description="A Kafka-wire-compatible mock broker.")
    parser.add_argument("--version", action="version", version=f"mockbroker {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    serve = sub.add_parser("serve", help="run brokers until SIGTERM or SIGINT",
                           description="Run brokers until SIGTERM or SIGINT.  Every flag can "
                                       "also be set as MOCKBROKER_<FLAG> (MOCKBROKER_BROKERS=3); "
                                       "flags on the command line win.",
                           epilog=READY_LINE,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    if serve_flags:
        add_serve_flags(serve)
    view_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "serve" not in argv:
        return _command(argv)
    # The broker's start-up makes many long-lived objects (codecs, handlers, config tables) and
    # no garbage: the collector has nothing to find among them until serve freezes them, once
    # it listens, and collects again.
    gc.disable()
    try:
        return _command(argv)
    finally:
        gc.enable()


def _command(argv: list[str]) -> int:
    # without "serve" on the command line, parsing never reaches its flags (nor their tables)
    parser = build_parser(serve_flags="serve" in argv)
    _environment_defaults(parser, argv, os.environ)
    args = parser.parse_args(argv)
    if args.command in ("groups", "topics"):
        return view_command(parser, args, os.environ)
    if args.command == "serve":
        from mockbroker.cli.serve import run

        return run(parser, args)
    return 0
