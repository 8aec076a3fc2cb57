"""The admin HTTP API fuzzed from its own OpenAPI document (schemathesis), against a live
cluster: no call gets a 5xx, and a refused call (4xx) changes nothing — topics, groups, faults
and brokers read the same before and after it."""

from __future__ import annotations

import json
import urllib.request

import pytest
from hypothesis import HealthCheck, given, settings

from mockbroker import MockCluster

schemathesis = pytest.importorskip("schemathesis")

#: examples per operation: the whole run stays within seconds
EXAMPLES = 8
STATE = ("/topics?internal=true", "/groups", "/faults", "/brokers")


def _snapshot(base: str) -> dict:
    def get(path):
        with urllib.request.urlopen(base + path, timeout=10) as response:
            return json.load(response)
    return {path: get(path) for path in STATE}


def test_admin_api_from_its_openapi_document():
    with MockCluster(brokers=2, topics={"orders": 2}) as cluster:
        base = cluster.admin_url
        schema = schemathesis.openapi.from_url(f"{base}/openapi.json")
        problems: list = []
        operations = [result.ok() for result in schema.get_all_operations()]
        assert len(operations) > 10
        for operation in operations:

            @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                      suppress_health_check=list(HealthCheck))
            @given(case=operation.as_strategy())
            def run(case):
                before = _snapshot(base)
                response = case.call(base_url=base, timeout=10)
                where = f"{case.method} {case.formatted_path} {case.query} {case.body!r}"
                if response.status_code >= 500 and not (
                        case.path == "/health" and response.status_code == 503):
                    problems.append((where, response.status_code, response.text[:300]))
                elif 400 <= response.status_code < 500:
                    if "error" not in response.json():
                        problems.append((where, response.status_code, "no error named"))
                    after = _snapshot(base)
                    if after != before:
                        problems.append((where, response.status_code, "state changed"))

            run()
            # each operation starts from the same cluster: nothing stopped, nothing injected
            urllib.request.urlopen(urllib.request.Request(f"{base}/reset", method="POST"),
                                   timeout=10).close()
        assert not problems, problems[:10]
