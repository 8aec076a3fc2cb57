"""``mockbroker serve``: run brokers until SIGTERM or SIGINT; ``mockbroker groups`` and
``mockbroker topics``: a running broker's groups and topics in the terminal (see
:func:`view_command`), read from its admin API.

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
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Mapping

from mockbroker._version import __version__
from mockbroker.io.admin_token import check_admin_token

# What a command needs is imported when it runs: --version, --help and the terminal views never
# load the broker (its core, the codec, aiohttp); only serve's flags load the settings' tables.
if TYPE_CHECKING:
    from mockbroker.admin import AdminClient
    from mockbroker.core.security.config import SecuritySettings
    from mockbroker.core.views import GroupView, TopicView
    from mockbroker.io.runtime import ClusterRuntime


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

#: what the ready line holds, for ``serve --help`` and users' scripts
READY_LINE = """\
When every listener is up, serve prints one line to stdout and flushes it:

  mockbroker ready bootstrap=HOST:PORT[,HOST:PORT...] admin=http[s]://HOST:PORT
      [listeners=PROTOCOL://HOST:PORT[,PROTOCOL://HOST:PORT...]] [ca=PATH] [token=TOKEN]

bootstrap= is the first listener's brokers; listeners= (only with several listeners) names
every broker of every listener, in the order the listeners were given (PLAINTEXT://h:9092,
PLAINTEXT://h:9093,SASL_SSL://h:9094,...); ca= is the PEM file of the CA that clients of a TLS
listener (or of --admin-tls) trust; token= is what the admin API requires, sent as
"Authorization: Bearer TOKEN" (it does off loopback, or when given --admin-token).

The brokers answer from then on.  The admin API's HTTP server finishes loading just after: a
call made before it serves waits and is then answered.
"""


def _security_value(name: str, text: str) -> SecuritySettings:
    """``check_security`` of one setting; its ValueError as argparse's error, without the
    setting's name (argparse names the flag, or the variable, itself)."""
    from mockbroker.core.security.config import check_security

    try:
        return check_security({name: text})
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{name}: ")) from None


def _protocol(text: str) -> str:
    return _security_value("security_protocol", text).listeners[0]


def _listeners(text: str) -> list[str]:
    return list(_security_value("listeners", text).listeners)


def _mechanisms(text: str) -> list[str]:
    mechanisms = list(_security_value("sasl_mechanisms", text).sasl_mechanisms)
    if not mechanisms:
        raise argparse.ArgumentTypeError(f"expected a mechanism, got {text!r}")
    return mechanisms


def _users(text: str) -> list[str]:
    # NAME:PASSWORD entries, comma-separated as MOCKBROKER_USER names several (so a password
    # given here holds no comma; MockCluster(users={...}) takes any)
    entries = [entry.strip() for entry in text.split(",") if entry.strip()]
    if not entries:
        raise argparse.ArgumentTypeError(f"expected NAME:PASSWORD, got {text!r}")
    _security_value("users", entries)  # type: ignore[arg-type]
    return entries


def _super_users(text: str) -> list[str]:
    users = list(_security_value("super_users", text).super_users)
    if not users:
        raise argparse.ArgumentTypeError(f"expected a user name or User:NAME, got {text!r}")
    return users


def _reauth_ms(text: str) -> int:
    return _security_value("connections_max_reauth_ms", text).connections_max_reauth_ms


def _client_auth(text: str) -> str:
    return _security_value("ssl_client_auth", text.strip().lower()).ssl_client_auth


def _pem_file(text: str) -> str:
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"no such file: {text!r}")
    return text


def _admin_token(text: str) -> str:
    try:
        return check_admin_token(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("admin_token: ")) from None


#: the security flags' destinations, MockCluster's names: what check_security takes
_SECURITY_DESTS = ("security_protocol", "listeners", "sasl_mechanisms", "users", "super_users",
                   "authorizer", "allow_everyone_if_no_acl_found", "connections_max_reauth_ms",
                   "ssl_client_auth")
#: the user's own TLS files (MockCluster's names)
_TLS_DESTS = ("ssl_certificate_location", "ssl_key_location", "ssl_ca_location")


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
        _serve_flags(serve)
    _view_parsers(sub)
    return parser


def _serve_flags(serve: argparse.ArgumentParser) -> None:
    # the flags' choices and the Kafka settings come from the core's tables
    from mockbroker.core.clock import CLOCKS
    from mockbroker.core.security.config import CLIENT_AUTH
    from mockbroker.core.settings import SETTINGS

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
    security = serve.add_argument_group(
        "security", "listeners, SASL users, TLS and the authorizer; repeatable flags also take "
                    "comma-separated lists, which is how their MOCKBROKER_* variable names "
                    "several")
    security.add_argument("--security-protocol", type=_protocol, default=None,
                          metavar="PROTOCOL",
                          help="the one listener's protocol: PLAINTEXT (default), SSL, "
                               "SASL_PLAINTEXT or SASL_SSL")
    security.add_argument("--listener", dest="listeners", action="extend", default=[],
                          type=_listeners, metavar="PROTOCOL",
                          help="a listener (repeatable: several protocols at once, each on its "
                               "own ports, brokers' next ports after the previous listener's); "
                               "bootstrap= is the first's, listeners= in the ready line names "
                               "them all; instead of --security-protocol")
    security.add_argument("--sasl-mechanism", dest="sasl_mechanisms", action="extend",
                          default=[], type=_mechanisms, metavar="MECHANISM",
                          help="a SASL mechanism to enable (repeatable; default: all of PLAIN, "
                               "SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)")
    security.add_argument("--user", dest="users", action="extend", default=[], type=_users,
                          metavar="NAME:PASSWORD",
                          help="a SASL user, for PLAIN and both SCRAM mechanisms (repeatable)")
    security.add_argument("--super-user", dest="super_users", action="extend", default=[],
                          type=_super_users, metavar="NAME",
                          help="a user (alice or User:alice) the authorizer allows everything "
                               "(repeatable)")
    security.add_argument("--authorizer", action="store_true",
                          help="authorize requests by ACLs, as Kafka's StandardAuthorizer "
                               "(default: everything is allowed)")
    security.add_argument("--allow-everyone-if-no-acl-found", action="store_true",
                          help="with --authorizer: allow actions on resources no ACL covers "
                               "(default: deny them)")
    security.add_argument("--ssl-client-auth", type=_client_auth, default=None,
                          metavar="{" + ",".join(CLIENT_AUTH) + "}",
                          help="TLS listeners: ask clients for a certificate (default: none)")
    security.add_argument("--connections-max-reauth-ms", type=_reauth_ms, default=None,
                          metavar="MS",
                          help="SASL sessions expire after this long unless the client "
                               "re-authenticates (default 0: never)")
    security.add_argument("--ssl-certificate-location", type=_pem_file, default=None,
                          metavar="PEM",
                          help="the brokers' certificate (chain) for TLS listeners and "
                               "--admin-tls, with --ssl-key-location (default: one signed by a "
                               "CA made at start, shown as ca= in the ready line)")
    security.add_argument("--ssl-key-location", type=_pem_file, default=None, metavar="PEM",
                          help="the private key of --ssl-certificate-location")
    security.add_argument("--ssl-ca-location", type=_pem_file, default=None, metavar="PEM",
                          help="with your certificate: the CA(s) client certificates are "
                               "checked against (--ssl-client-auth)")
    serve.add_argument("--clock", choices=CLOCKS, default="real",
                       help="the broker clock: real (default), or manual, which moves only by "
                            "POST /clock/advance {\"ms\": N}: sessions, rebalances, "
                            "transaction timeouts, retention and fetch waits wait for it")
    admin = serve.add_argument_group("admin API")
    admin.add_argument("--admin-token", type=_admin_token, default=None, metavar="TOKEN",
                       help="require Authorization: Bearer TOKEN on every admin call but GET "
                            "/health (default: off loopback, a token made at start and shown "
                            "as token= in the ready line; on loopback, none)")
    admin.add_argument("--admin-tls", action="store_true",
                       help="serve the admin API over HTTPS, with the brokers' certificate "
                            "(yours, or one from the CA made at start)")
    kafka = serve.add_argument_group("Kafka broker settings (Kafka's names, dashes for dots)")
    for setting in SETTINGS.values():
        kafka.add_argument("--" + setting.name.replace(".", "-"), dest=setting.python_name,
                           default=None, metavar=setting.type.__name__.upper(),
                           help=f"default: {setting.default}")


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
    from mockbroker.io.runtime import WILDCARD_HOSTS

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


class SettingError(Exception):
    """Settings that each look right but do not go together (a TLS file that is no PEM, client
    authentication without a CA to check it against)."""


def security_settings(args: argparse.Namespace) -> SecuritySettings:
    """The security flags, checked together (ValueError naming what is wrong)."""
    from mockbroker.core.security.config import check_security

    values = {name: getattr(args, name) for name in _SECURITY_DESTS}
    return check_security({name: value for name, value in values.items()
                           if value not in (None, [], False)})


def tls_files(args: argparse.Namespace) -> dict[str, str]:
    files = {name: getattr(args, name) for name in _TLS_DESTS if getattr(args, name)}
    if files and not {"ssl_certificate_location", "ssl_key_location"} <= files.keys():
        raise ValueError("--ssl-certificate-location and --ssl-key-location go together "
                         "(--ssl-ca-location, for client certificates, is optional)")
    client_auth = args.ssl_client_auth or "none"
    if files and client_auth != "none" and "ssl_ca_location" not in files:
        raise ValueError(f"--ssl-client-auth {client_auth} with your own certificate needs "
                         f"--ssl-ca-location, the CA(s) client certificates are checked "
                         f"against")
    return files


#: a setting's name (at the start of check_security's message) as the flag that sets it
_FLAGS = {"security_protocol": "--security-protocol", "listeners": "--listener",
          "sasl_mechanisms": "--sasl-mechanism", "users": "--user",
          "super_users": "--super-user", "ssl_client_auth": "--ssl-client-auth",
          "connections_max_reauth_ms": "--connections-max-reauth-ms"}


def _as_flags(message: str) -> str:
    name, sep, rest = message.partition(": ")
    if sep and name in _FLAGS:
        return f"{_FLAGS[name]}: {rest}"
    if message.startswith("give security_protocol (one listener) or listeners"):
        return "give --security-protocol (one listener) or --listener (several), not both"
    return message


def ready_line(runtime: ClusterRuntime) -> str:
    """The line ``serve`` prints once every listener is up (:data:`READY_LINE`)."""
    parts = [f"bootstrap={runtime.bootstrap_servers}", f"admin={runtime.admin_url}"]
    bootstraps = runtime.listener_bootstraps
    if len(bootstraps) > 1:
        parts.append("listeners=" + ",".join(f"{name}://{address}"
                                             for name, bootstrap in bootstraps.items()
                                             for address in bootstrap.split(",")))
    if runtime.ssl_ca_location:
        parts.append(f"ca={runtime.ssl_ca_location}")
    if runtime.admin_token:
        parts.append(f"token={runtime.admin_token}")
    if runtime.manual_clock:
        parts.append("clock=manual")
    return "mockbroker ready " + " ".join(parts)


ENV_PREFIX = "MOCKBROKER_"
#: variables of the project's other parts (the Spark fixture's, the terminal views' admin URL),
#: never flags of serve
_OTHER_PARTS = ("MOCKBROKER_SPARK_", "MOCKBROKER_ADMIN_URL")
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
    from mockbroker.core.settings import SETTINGS, coerce

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
    import asyncio
    import signal

    from mockbroker.core.clock import make_clock
    from mockbroker.core.settings import SETTINGS
    from mockbroker.io.runtime import ClusterRuntime

    # Signals are caught from the start: a SIGTERM right after the ready line must still
    # close the listeners and exit 0.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    settings = {name: getattr(args, name) for name in SETTINGS
                if getattr(args, name, None) is not None}
    try:
        runtime = ClusterRuntime(brokers=args.brokers, host=args.host, port=args.port,
                                 http_port=args.http_port,
                                 advertised_host=advertised_host(args.host,
                                                                 args.advertised_host),
                                 topics=dict(args.topic), settings=settings,
                                 security=security_settings(args), tls_files=tls_files(args),
                                 admin_token=args.admin_token, admin_tls=args.admin_tls,
                                 clock=make_clock(args.clock))
    except ValueError as exc:
        raise SettingError(_as_flags(str(exc))) from exc
    except OSError as exc:  # only TLS files are read before listening: not a PEM, unreadable
        raise SettingError(f"cannot use the TLS certificate or key: {exc}") from exc
    try:
        await runtime.start(wait_for_admin=False)
    except OSError as exc:  # the runtime has closed whatever it had opened
        raise StartError(f"cannot listen on host {args.host!r}: {exc.strerror or exc}") from exc
    # What start-up made lives as long as the process: kept out of every later collection
    gc.freeze()
    gc.enable()
    # Every listener listens: the brokers answer now, and a call to the admin API waits in its
    # socket's backlog until the HTTP application, loading meanwhile, serves it.
    print(ready_line(runtime), flush=True)
    keep_freed_memory(os.environ)
    try:
        await runtime.admin.up()
    except Exception as exc:
        await runtime.stop()
        raise StartError(f"the admin API did not start: {exc}") from exc
    await stop.wait()
    await runtime.stop()


#: what glibc's malloc reads from the environment: a user who sets any of it keeps their own
MALLOC_VARIABLES = ("GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
                    "MALLOC_TOP_PAD_")
#: allocations up to this size come from the heap, whose freed memory is used again ...
MMAP_THRESHOLD = 32 << 20
#: ... and up to this much free memory stays in the process rather than going back
TRIM_THRESHOLD = 64 << 20


def keep_freed_memory(environ: Mapping[str, str]) -> bool:
    """Have glibc's malloc keep freed memory for the next allocation; returns whether it did.

    A broker allocates and frees a frame's worth of memory for every large request and answer.
    By default glibc hands such blocks back to the kernel when they are freed, and the next one
    is fresh memory whose every page faults on first touch: a 12-partition Fetch of 10 KiB
    records costs twice the CPU that way.  Only ``serve`` asks this, for its own process: a
    MockCluster leaves its host process's allocator alone.  Without glibc, nothing changes."""
    if any(name in environ for name in MALLOC_VARIABLES):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's <malloc.h>
    return bool(mallopt(m_mmap_threshold, MMAP_THRESHOLD)) and \
        bool(mallopt(m_trim_threshold, TRIM_THRESHOLD))


# -- the terminal views: groups and topics -----------------------------------------------------

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
(__consumer_offsets, __transaction_state) only with --internal.

""" + _ADMIN_EPILOG


def _admin_url(text: str) -> str:
    if not re.match(r"https?://[^/\s]+", text):
        raise argparse.ArgumentTypeError(
            f"expected http://HOST:PORT or https://HOST:PORT, got {text!r}")
    return text.rstrip("/")


def _view_parsers(sub) -> None:
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
                        help="include __consumer_offsets and __transaction_state")
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
        import asyncio

        from mockbroker.core.settings import SETTINGS, resolve_settings

        try:
            resolve_settings({name: getattr(args, name) for name in SETTINGS
                              if getattr(args, name, None) is not None})
            security_settings(args)
            tls_files(args)
        except ValueError as exc:
            parser.error(_as_flags(str(exc)))
        try:
            asyncio.run(serve(args))
        except SettingError as exc:
            parser.error(str(exc))
        except StartError as exc:
            sys.stderr.write(f"mockbroker: error: {exc}\n")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
