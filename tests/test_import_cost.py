"""What importing the package, the codec and the pytest plugin, and running the CLI's light
commands, loads: each runs in a fresh interpreter, which reports the heavy modules it ended
up with.  ``import mockbroker`` and ``--version`` must leave the broker (aiohttp, cryptography,
the handlers, construct) unloaded; the lazily exported names must still all resolve; and the
brokers' modules load no HTTP server (the admin API loads it as it starts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("aiohttp", "cryptography", "construct", "mockbroker.handlers", "mockbroker.core",
         "mockbroker.io.runtime", "wire.definitions")

_REPORT = f"""
import json, sys
print(json.dumps(sorted(name for name in {HEAVY!r} if name in sys.modules)))
"""


def loaded_by(code: str) -> list[str]:
    """The modules of HEAVY loaded once ``code`` has run in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", code + _REPORT], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_mockbroker_loads_no_broker():
    assert loaded_by("import mockbroker; assert mockbroker.__version__") == []


def test_lazy_exports_resolve():
    loaded = loaded_by("import mockbroker\n"
                       "for name in mockbroker.__all__: getattr(mockbroker, name)\n"
                       "from mockbroker import MockCluster, AdminClient, DISCONNECT\n")
    assert "mockbroker.handlers" in loaded
    # the HTTP server is loaded by the admin API as it starts; TLS only by a TLS listener
    assert "aiohttp" not in loaded and "cryptography" not in loaded


def test_unknown_name_is_an_attribute_error():
    import mockbroker

    with pytest.raises(AttributeError, match="no_such_name"):
        mockbroker.no_such_name  # noqa: B018


def test_wire_errors_need_no_codec():
    assert loaded_by("from wire import errors; assert errors.UNKNOWN_TOPIC_OR_PARTITION") == []


def test_every_wire_name_resolves():
    import wire

    for name in wire.__all__:
        assert getattr(wire, name) is not None, name


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["groups", "--help"],
                                  ["topics", "--help"]])
def test_light_commands_load_no_broker(argv):
    code = ("import sys\nfrom mockbroker.cli import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit as exc:\n    assert exc.code == 0\n")
    assert loaded_by(code) == []


def test_serve_help_loads_settings_not_the_server():
    code = ("from mockbroker.cli import main\n"
            "try:\n    main(['serve', '--help'])\nexcept SystemExit as exc:\n"
            "    assert exc.code == 0\n")
    assert loaded_by(code) == ["mockbroker.core"]  # the settings' tables, nothing else heavy


def test_pytest_plugin_loads_no_broker():
    assert loaded_by("import conftest_plugin.plugin") == []


def test_the_brokers_load_no_http_server():
    # what ``mockbroker serve`` needs before its ready line: the runtime, the listeners and the
    # handlers, not aiohttp (loaded beside the running brokers by the admin API)
    loaded = loaded_by("import mockbroker.io.runtime, mockbroker.io.kafka.server")
    assert "mockbroker.handlers" in loaded and "aiohttp" not in loaded


def test_a_started_broker_loads_only_what_its_requests_need():
    """Built and answering ApiVersions, a broker has loaded no API handler beyond ApiVersions',
    no SASL exchange (no users, no login yet), no config API, no group type, no transaction
    coordinator and no fetch session; the first EndTxn request loads EndTxn's handler and
    definition and the transaction coordinator, and is answered; neither loads construct.  A SASL cluster
    with users derives their credentials at once."""
    code = """
import json, sys
import wire
from mockbroker.core.cluster import Broker
from mockbroker.core.dispatch import Connection
from mockbroker.handlers import new_core

core = new_core([Broker(0, "127.0.0.1", 9092)])
conn = Connection(0, 1)

def ask(api_key, version, body):
    frame = wire.encode_request(api_key, version, 7, "probe", body, size_prefix=False)
    return wire.decode_response(api_key, version, core.receive(frame, conn).value[4:])[1]

def loaded():
    return sorted(name for name in sys.modules
                  if name.startswith(("mockbroker.handlers.", "mockbroker.core.config.",
                                      "mockbroker.core.security.mechanisms",
                                      "wire.definitions.end_txn", "mockbroker.core.groups.",
                                      "mockbroker.core.transactions.",
                                      "mockbroker.core.coordinators.",
                                      "mockbroker.core.datapath.fetch_sessions",
                                      "mockbroker.core.control.error_responses", "construct")))

versions = ask(18, 3, wire.request_class(18)(client_software_name="probe",
                                             client_software_version="1"))
before = loaded()
answer = ask(26, 5, wire.request_class(26)(transactional_id="t", producer_id=1,
                                           producer_epoch=0, committed=True))
print(json.dumps([len(versions.api_keys), before, answer.error_code, loaded()]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    count, loaded, error_code, after = json.loads(done.stdout.strip().splitlines()[-1])
    from mockbroker.handlers import SERVED

    # every API served, but those advertised only with a setting on (client telemetry)
    assert count == len([s for s in SERVED.values() if s.advertised_if is None])
    assert [name for name in loaded if name.startswith("mockbroker.handlers.")] == \
        ["mockbroker.handlers.api_versions", "mockbroker.handlers.registry"]
    assert "wire.definitions.end_txn" not in loaded
    assert "mockbroker.core.security.mechanisms" not in loaded
    assert "mockbroker.core.config.alter" not in loaded
    assert "mockbroker.core.config.describe" not in loaded
    # what serves groups, transactions and fetch sessions loads with their first request
    assert not {"mockbroker.core.groups.classic.protocol",
                "mockbroker.core.groups.consumer.protocol", "mockbroker.core.groups.records",
                "mockbroker.core.groups.offsets", "mockbroker.core.transactions.coordinator",
                "mockbroker.core.datapath.fetch_sessions",
                "mockbroker.core.control.error_responses"} & set(loaded)
    # where groups will live: built at start
    assert "mockbroker.core.coordinators.placement" in loaded
    assert error_code != 0  # a transactional id never initialised: Kafka's refusal
    assert {"mockbroker.handlers.end_txn", "wire.definitions.end_txn",
            "mockbroker.core.transactions.coordinator"} <= set(after)
    # the generated codecs answer both, with no construct (only for those who build Structs)
    assert not [name for name in after if name.startswith("construct")]

    from mockbroker.core.security.config import Security, check_security

    with_users = Security(check_security({"listeners": ("SASL_PLAINTEXT",),
                                          "users": {"alice": "secret"}}))
    assert "alice" in with_users._credentials.users()


def test_serve_builds_no_dataclass_before_its_ready_line():
    """A dataclass compiles its methods as its module loads, which once took a third of the
    ready line: what ``mockbroker serve`` loads to get there holds none of ours (the admin API's
    views, loaded beside the running brokers, are dataclasses)."""
    code = """
import json, os, sys
import mockbroker.cli as cli
import mockbroker.cli.serve as serve

def made_so_far(runtime):
    classes = [value for module in list(sys.modules.values())
               for value in list(vars(module).values()) if isinstance(value, type)]
    ours = {f"{cls.__module__}.{cls.__qualname__}" for cls in classes
            if cls.__module__.split(".")[0] in ("mockbroker", "wire")}
    built = {f"{cls.__module__}.{cls.__qualname__}" for cls in classes
             if "__dataclass_fields__" in cls.__dict__}
    print(json.dumps([len(ours), sorted(ours & built)]), flush=True)
    os._exit(0)

serve.ready_line = made_so_far
cli.main(["serve", "--port", "0", "--http-port", "0"])
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    classes, dataclasses = json.loads(done.stdout.strip().splitlines()[-1])
    assert classes > 100  # the cluster, the codec and the listeners are all loaded by then
    assert dataclasses == []


def test_a_cluster_without_a_schema_registry_loads_none_of_it():
    code = """
import sys
from mockbroker import MockCluster
with MockCluster() as cluster:
    cluster.admin.add_fault("Produce", error=6)
    cluster.admin.faults()
    cluster.admin.topics()
print(sorted(m for m in sys.modules if m.startswith(("mockbroker.core.schemas",
                                                     "mockbroker.io.registry"))))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_serve_flags_are_parsed_without_asking_the_terminal_width():
    # argparse makes a formatter for every flag added, and one made without a width asks the
    # terminal's, importing shutil (and the compression modules) into serve's start-up
    code = ("import sys\nfrom mockbroker.cli import build_parser\n"
            "build_parser().parse_args(['serve', '--brokers', '3'])\n"
            "print('shutil' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]


def test_help_is_formatted_to_the_terminal_width():
    def usage_lines(columns: int) -> int:
        done = subprocess.run([sys.executable, "-m", "mockbroker.cli", "serve", "--help"],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "COLUMNS": str(columns)})
        assert done.returncode == 0, done.stderr
        return done.stdout.split("\n\n")[0].count("\n") + 1

    assert usage_lines(60) > usage_lines(200) > 1
