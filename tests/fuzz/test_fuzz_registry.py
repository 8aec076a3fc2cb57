"""The Schema Registry's HTTP API fuzzed: random calls to its routes (paths filled with good
and bad names, versions and ids, query flags, bodies of any JSON or none) against a live
registry.  No call gets a 5xx, every answer is one of Confluent's JSON bodies, and the registry
still serves a client afterwards."""

from __future__ import annotations

import http.client
import json
import urllib.parse

from hypothesis import HealthCheck, given, settings, strategies as st

from mockbroker import MockCluster
from mockbroker.core.schemas.routes import ROUTES
from tests.core.schemas.test_registry_inputs import BODIES, JSON_VALUES

FILLS = {
    "subject": st.sampled_from(["s", "t", "users-value", "a b", "%2F", "__GLOBAL", "x" * 300]),
    "version": st.sampled_from(["1", "2", "latest", "-1", "0", "one", "99999999999", "1.5"]),
    "id": st.sampled_from(["1", "2", "0", "-5", "x", "2147483648"]),
    "guid": st.sampled_from(["00000000-0000-0000-0000-000000000000", "nope"]),
}
QUERIES = st.dictionaries(
    st.sampled_from(["normalize", "deleted", "permanent", "verbose", "defaultToGlobal", "force",
                     "format", "subject", "offset", "limit", "deletedOnly", "subjectPrefix",
                     "key", "value"]),
    st.sampled_from(["true", "True", "false", "False", "1", "serialized", "resolved", "s",
                     "-1", "abc", ""]), max_size=3)
CALLS = st.tuples(st.sampled_from(ROUTES), st.data(), QUERIES,
                  st.one_of(st.none(), BODIES.map(json.dumps), JSON_VALUES.map(json.dumps),
                            st.sampled_from(["{not json", "", "[1, 2]"])))


def _call(connection: http.client.HTTPConnection, method: str, path: str,
          body: str | None) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/vnd.schemaregistry.v1+json"}
    connection.request(method, path, body=None if body is None else body.encode(),
                       headers=headers)
    answer = connection.getresponse()
    return answer.status, answer.read()


def test_random_calls_never_fail_the_registry():
    with MockCluster(schema_registry=True) as cluster:
        address = urllib.parse.urlsplit(cluster.schema_registry_url)
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
        seen: set[int] = set()

        @settings(max_examples=400, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(CALLS)
        def one(call):
            (method, template, _), data, query, body = call
            path = template
            for name, values in FILLS.items():
                if "{" + name + "}" in path:
                    path = path.replace("{" + name + "}",
                                        urllib.parse.quote(data.draw(values), safe="%"))
            if query:
                path += "?" + urllib.parse.urlencode(query)
            status, data_ = _call(connection, method, path, body)
            seen.add(status)
            assert status < 500, (method, path, body, data_)
            if status >= 400:
                answer = json.loads(data_)
                assert set(answer) == {"error_code", "message"}, answer
        one()
        assert 200 in seen and 404 in seen and 422 in seen, seen
        # still serving
        status, _ = _call(connection, "POST", "/subjects/after/versions",
                          json.dumps({"schema": '"string"'}))
        assert status == 200
        connection.close()
