"""``mockbroker serve``: run brokers until SIGTERM or SIGINT, announcing them in the ready line
(:data:`READY_LINE`).

The flags are checked together here (security settings, the user's TLS files), then a
:class:`~mockbroker.io.runtime.ClusterRuntime` runs on an event loop of its own.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    from mockbroker.core.security.config import SecuritySettings
    from mockbroker.io.runtime import ClusterRuntime


#: what the ready line holds, for ``serve --help`` and users' scripts
READY_LINE = """\
When every listener is up, serve prints one line to stdout and flushes it:

  mockbroker ready bootstrap=HOST:PORT[,HOST:PORT...] admin=http[s]://HOST:PORT
      [listeners=PROTOCOL://HOST:PORT[,PROTOCOL://HOST:PORT...]] [ca=PATH] [token=TOKEN]
      [clock=manual] [schema_registry=http://HOST:PORT]

bootstrap= is the first listener's brokers; listeners= (only with several listeners) names
every broker of every listener, in the order the listeners were given (PLAINTEXT://h:9092,
PLAINTEXT://h:9093,SASL_SSL://h:9094,...); ca= is the PEM file of the CA that clients of a TLS
listener (or of --admin-tls) trust; token= is what the admin API requires, sent as
"Authorization: Bearer TOKEN" (it does off loopback, or when given --admin-token); clock=manual
says the broker clock moves only when told; schema_registry= is the Schema Registry's URL (with
--schema-registry).

The brokers answer from then on.  The admin API's HTTP server finishes loading just after: a
call made before it serves waits and is then answered.
"""



#: the security flags' destinations, MockCluster's names: what check_security takes
_SECURITY_DESTS = ("security_protocol", "listeners", "sasl_mechanisms", "users", "super_users",
                   "authorizer", "allow_everyone_if_no_acl_found", "connections_max_reauth_ms",
                   "ssl_client_auth")
#: the user's own TLS files (MockCluster's names)
#: the young generation's collection threshold of a serving broker (see ``serve``)
GC_YOUNG = 10_000
_TLS_DESTS = ("ssl_certificate_location", "ssl_key_location", "ssl_ca_location")



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
    if runtime.schema_registry_url:
        parts.append(f"schema_registry={runtime.schema_registry_url}")
    return "mockbroker ready " + " ".join(parts)



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
                                 clock=make_clock(args.clock),
                                 schema_registry=args.schema_registry,
                                 schema_registry_port=args.schema_registry_port)
    except ValueError as exc:
        raise SettingError(_as_flags(str(exc))) from exc
    except OSError as exc:  # only TLS files are read before listening: not a PEM, unreadable
        raise SettingError(f"cannot use the TLS certificate or key: {exc}") from exc
    try:
        await runtime.start(wait_for_admin=False)
    except OSError as exc:  # the runtime has closed whatever it had opened
        raise StartError(f"cannot listen on host {args.host!r}: {exc.strerror or exc}") from exc
    # What start-up made lives as long as the process: kept out of every later collection.
    # Then the young generation is collected every GC_YOUNG allocations rather than Python's
    # 700: a request's objects are mostly freed by their counts before a collection comes,
    # so fewer collections find less to walk (an idle consumer's long polls live half a
    # second, and were walked again by every collection while they waited).
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG, older, oldest)
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



def run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``serve`` with its parsed flags: 0 once stopped, 1 when a listener cannot open, exit 2
    (``parser.error``) for settings that do not go together."""
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
