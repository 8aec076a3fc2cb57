"""``mockbroker serve``'s flags: their types and checks, the Kafka settings as flags, and the
``MOCKBROKER_<FLAG>`` environment variables that set them (how the container is configured).

Loading this module loads no broker: the flags' tables (settings, clocks, client auth) are
imported only when ``serve``'s flags are built (:func:`serve_flags`).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Callable, Mapping

from mockbroker.io.admin.token import check_admin_token

if TYPE_CHECKING:
    from mockbroker.core.security.config import SecuritySettings


class _Parser(argparse.ArgumentParser):
    #: formatting help or usage for a reader, in the terminal's width
    _for_reader = False

    def error(self, message: str) -> None:  # one line, exit 2
        sys.stderr.write(f"mockbroker: error: {message}\n")
        sys.exit(2)

    def _get_formatter(self):
        # argparse makes a formatter for every flag added, only to check its metavar, and a
        # formatter made without a width asks the terminal's (which imports shutil and, with
        # it, the compression modules: a few percent of serve's start-up).  Those get a width;
        # help and usage printed for a reader are formatted to the terminal.
        if self._for_reader:
            return super()._get_formatter()
        return self.formatter_class(prog=self.prog, width=80)

    def format_usage(self) -> str:
        return self._formatted_for_reader(super().format_usage)

    def format_help(self) -> str:
        return self._formatted_for_reader(super().format_help)

    def _formatted_for_reader(self, formatted: Callable[[], str]) -> str:
        self._for_reader = True
        try:
            return formatted()
        finally:
            self._for_reader = False


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



def add_serve_flags(serve: argparse.ArgumentParser) -> None:
    """Every flag of ``serve``, on its parser."""
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
    registry = serve.add_argument_group("Schema Registry")
    registry.add_argument("--schema-registry", action="store_true",
                          help="run a Schema Registry (Confluent's REST API v1) on its own port, "
                               "its schemas in the _schemas topic; shown as schema_registry= in "
                               "the ready line")
    registry.add_argument("--schema-registry-port", type=_port, default=0,
                          help="the Schema Registry's port (default 0: ephemeral)")
    kafka = serve.add_argument_group("Kafka broker settings (Kafka's names, dashes for dots)")
    for setting in SETTINGS.values():
        # a true-or-false setting given alone is on: --telemetry-receiver
        switch = {"nargs": "?", "const": "true"} if setting.type is bool else {}
        kafka.add_argument("--" + setting.name.replace(".", "-"), dest=setting.python_name,
                           default=None, metavar=setting.type.__name__.upper(),
                           help=f"default: {setting.default}", **switch)


def _topics(text: str) -> list[tuple[str, int]]:
    # Kafka topic names never hold a comma, so a list is unambiguous.
    topics = []
    for item in text.split(","):
        name, sep, count = item.strip().rpartition(":")
        if not sep or not name or not count.isdigit() or int(count) < 1:
            raise argparse.ArgumentTypeError(f"expected NAME:PARTITIONS, got {text!r}")
        topics.append((name, int(count)))
    return topics




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

