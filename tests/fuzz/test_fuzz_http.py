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


#: the longest a fuzzed wait (POST /wait/...) may wait for its condition, in ms
WAIT_MS = 200


def _bounded(case) -> None:
    """A wait the fuzzer made waits WAIT_MS at most (a timeout_ms it made of the wrong type
    or out of range stays, for the server to refuse; a null one, like a missing one, would be
    the default of 30 s)."""
    if case.path.startswith("/wait/") and isinstance(case.body, dict):
        timeout = case.body.get("timeout_ms")
        if timeout is None:
            timeout = WAIT_MS + 1
        if isinstance(timeout, int) and not isinstance(timeout, bool) and \
                WAIT_MS < timeout <= 600_000:
            case.body = {**case.body, "timeout_ms": WAIT_MS}


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
                _bounded(case)
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


TOKEN = "fuzz-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _snapshot_with_token(base: str) -> dict:
    def get(path):
        request = urllib.request.Request(base + path, headers=AUTH)
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)
    return {path: get(path) for path in STATE}


def _challenge(response) -> str:
    """The WWW-Authenticate header (schemathesis keeps headers lowercased, as lists)."""
    return "".join(response.headers.get("www-authenticate", []))


def test_a_token_guarded_admin_api_from_its_bearer_document():
    """Where a token is required, the document says so, every operation but the public ones
    refuses a call without it (401, a reason, a Bearer challenge, nothing changed), and with
    it no call gets a 5xx."""
    with MockCluster(admin_token=TOKEN, topics={"orders": 1}) as cluster:
        base = cluster.admin_url
        schema = schemathesis.openapi.from_url(f"{base}/openapi.json", headers=AUTH)
        assert schema.raw_schema["security"] == [{"bearer": []}]
        problems: list = []
        operations = [result.ok() for result in schema.get_all_operations()]
        for operation in operations:
            public = operation.definition.raw.get("security") == []

            @settings(max_examples=3, deadline=None, database=None, derandomize=True,
                      suppress_health_check=list(HealthCheck))
            @given(case=operation.as_strategy())
            def run(case):
                where = f"{case.method} {case.formatted_path} {case.query} {case.body!r}"
                before = _snapshot_with_token(base)
                _bounded(case)
                anonymous = case.call(base_url=base, timeout=10,
                                      headers={"Authorization": "Bearer not-the-token"})
                if public:
                    if anonymous.status_code not in (200, 503):
                        problems.append((where, anonymous.status_code, "public yet refused"))
                elif anonymous.status_code != 401 or "error" not in anonymous.json() or \
                        not _challenge(anonymous).startswith("Bearer "):
                    problems.append((where, anonymous.status_code, "not refused as 401"))
                elif _snapshot_with_token(base) != before:
                    problems.append((where, 401, "state changed"))
                allowed = case.call(base_url=base, timeout=10, headers=AUTH)
                if allowed.status_code >= 500 and not (
                        case.path == "/health" and allowed.status_code == 503):
                    problems.append((where, allowed.status_code, allowed.text[:300]))

            run()
            urllib.request.urlopen(urllib.request.Request(f"{base}/reset", method="POST",
                                                          headers=AUTH), timeout=10).close()
        assert sum(1 for op in operations if op.definition.raw.get("security") == []) == 1
        assert not problems, problems[:10]
