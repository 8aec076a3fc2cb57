"""The served table and the handlers it loads on first use: what ApiVersions advertises is what
the handlers serve and what the codec reads, and a handler is loaded when its API is first asked
for, not before."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from mockbroker.handlers import REGISTRY, SERVED
from mockbroker.handlers.registry import ApiRegistry, Served
from wire.definitions import APIS, INDEX


def test_every_served_api_loads_a_handler_serving_exactly_its_versions_within_the_codec():
    for registration in REGISTRY:  # loads every handler module
        served = SERVED[registration.api_key]
        assert (registration.min_version, registration.max_version) == \
            (served.min_version, served.max_version)
        assert registration.advertised_min == served.advertised_min
        valid = APIS[registration.api_key].request.valid
        assert valid.lo <= registration.min_version <= registration.max_version <= valid.hi
        assert callable(registration.handler)
    assert [r.api_key for r in REGISTRY] == sorted(SERVED)
    assert REGISTRY.api_versions() == [
        (key, s.min_version if s.advertised_min is None else s.advertised_min, s.max_version)
        for key, s in sorted(SERVED.items())]
    assert REGISTRY.api_versions()[0] == (0, 0, 13)  # Produce: advertised from 0, as Kafka does


def test_the_codec_index_names_each_api_as_its_definition_does():
    for key, (name, _) in INDEX.items():
        assert (APIS[key].key, APIS[key].name) == (key, name)
    assert 9999 not in APIS and APIS.get(9999) is None


def test_a_handler_module_that_registers_nothing_is_an_error_not_a_silent_gap():
    registry = ApiRegistry({3: Served("registry", 0, 13)}, "mockbroker.handlers")
    assert registry.supports(3, 13) and not registry.supports(3, 14)
    with pytest.raises(ImportError, match="registered no handler for API key 3"):
        registry.get(3)
    assert registry.get(4) is None  # not served at all


def test_a_handler_outside_the_table_cannot_register_by_decorator():
    registry = ApiRegistry({}, "mockbroker.handlers")
    with pytest.raises(ValueError, match="not in the served table"):
        registry.handler(3)


def test_handlers_load_when_their_api_is_first_asked_for():
    """In a fresh interpreter: building a core and answering ApiVersions loads neither the
    EndTxn handler nor its definition; the first EndTxn request loads both and is answered."""
    script = textwrap.dedent("""
        import sys
        import wire
        from mockbroker.core.cluster import Broker
        from mockbroker.core.dispatch import Connection
        from mockbroker.handlers import new_core

        core = new_core([Broker(0, "127.0.0.1", 9092)])
        conn = Connection(0, 1)

        def ask(api_key, version, body):
            frame = wire.encode_request(api_key, version, 7, "probe", body, size_prefix=False)
            data = core.receive(frame, conn).value
            return wire.decode_response(api_key, version, data[4:])[1]

        versions = ask(18, 3, wire.request_class(18)(client_software_name="probe",
                                                     client_software_version="1"))
        print(len(versions.api_keys))
        loaded = ("mockbroker.handlers.end_txn", "wire.definitions.end_txn")
        print(*(name in sys.modules for name in loaded))
        answer = ask(26, 5, wire.request_class(26)(transactional_id="t", producer_id=1,
                                                   producer_epoch=0, committed=True))
        print(answer.error_code)
        print(*(name in sys.modules for name in loaded))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    count, before, error_code, after = result.stdout.splitlines()
    assert int(count) == len(SERVED)
    assert before == "False False"
    assert int(error_code) != 0  # a transactional id never initialised: Kafka's refusal
    assert after == "True True"
