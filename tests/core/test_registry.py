"""The served table and the handlers it loads on first use: what ApiVersions advertises is what
the handlers serve and what the codec reads (that a handler loads only when its API is first
asked for is in tests/test_import_cost.py)."""

from __future__ import annotations

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
    everything = {key: True for key in (s.advertised_if for s in SERVED.values()) if key}
    assert REGISTRY.api_versions(everything) == [
        (key, s.min_version if s.advertised_min is None else s.advertised_min, s.max_version)
        for key, s in sorted(SERVED.items())]
    # what a broker advertises only with a setting on is left out with its default (off)
    assert REGISTRY.api_versions() == [entry for entry in REGISTRY.api_versions(everything)
                                       if SERVED[entry[0]].advertised_if is None]
    assert REGISTRY.api_versions()[0] == (0, 0, 13)  # Produce: advertised from 0, as Kafka does


def test_the_telemetry_apis_are_advertised_with_a_telemetry_receiver_only():
    # Kafka 4.4 lists GetTelemetrySubscriptions and PushTelemetry in ApiVersions only when a
    # metrics reporter receives client telemetry, and serves both either way
    assert {key for key, s in SERVED.items() if s.advertised_if} == {71, 72}
    assert not {71, 72} & {key for key, _, _ in REGISTRY.api_versions()}
    assert {71, 72} <= {key for key, _, _ in
                        REGISTRY.api_versions({"telemetry_receiver": True})}
    assert REGISTRY.supports(71, 0) and REGISTRY.supports(72, 0)


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
