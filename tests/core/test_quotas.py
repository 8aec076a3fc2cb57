"""Client quotas in the core, on a manual clock: DescribeClientQuotas and AlterClientQuotas with
Kafka 4.4's checks and messages, which quota a (user, client id) is held to, and enforcement as
Kafka computes it: a rate over sampled windows never shorter than 10 s, throttle times of
``(rate - quota) / quota * window``, answers that carry them and connections muted for as long,
an empty Fetch answer when a consumer is over, the request-time cap of one window, the controller
mutation quota's token bucket, and the ``throttle`` control action."""

from __future__ import annotations

import pytest

import wire
from mockbroker.core.dispatch import Connection
from mockbroker.core.quotas.rate import Rate, TokenBucket, throttle_ms
from mockbroker.core.deferred import NO_RESPONSE
from tests.core.harness import START_MS, make_core, send
from wire import errors, records

DESCRIBE, ALTER = 48, 49
EXACT, DEFAULT, SPECIFIED = 0, 1, 2
ALTER_REQUEST = wire.request_class(ALTER)


def alter(core, *entries, validate_only=False, version=1):
    """``entries``: ({type: name}, {key: value or None to remove})."""
    body = ALTER_REQUEST(validate_only=validate_only, entries=[ALTER_REQUEST.EntryData(
        entity=[ALTER_REQUEST.EntityData(entity_type=k, entity_name=n) for k, n in e.items()],
        ops=[ALTER_REQUEST.OpData(key=key, value=0.0 if value is None else value,
                                  remove=value is None) for key, value in ops.items()])
        for e, ops in entries])
    answer = send(core, ALTER, version, body)
    return [({x.entity_type: x.entity_name for x in r.entity}, r.error_code, r.error_message)
            for r in answer.entries]


def describe(core, *components, strict=False, version=1):
    cls = wire.request_class(DESCRIBE)
    answer = send(core, DESCRIBE, version, cls(strict=strict, components=[
        cls.ComponentData(entity_type=t, match_type=m, match=n) for t, m, n in components]))
    if answer.entries is None:
        return answer.error_code, answer.error_message
    return answer.error_code, answer.error_message, [
        ({x.entity_type: x.entity_name for x in e.entity}, {v.key: v.value for v in e.values})
        for e in answer.entries]


# -- DescribeClientQuotas and AlterClientQuotas ------------------------------------------------

def test_quotas_are_set_described_and_removed():
    core = make_core()
    assert alter(core, ({"user": "alice"}, {"producer_byte_rate": 1024.0}),
                 ({"user": "alice", "client-id": "app"}, {"consumer_byte_rate": 2048.0}),
                 ({"user": None}, {"request_percentage": 50.0})) == [
        ({"user": "alice"}, 0, None), ({"user": "alice", "client-id": "app"}, 0, None),
        ({"user": None}, 0, None)]
    # a successful describe has an empty message, as Kafka's does
    assert describe(core, ("user", EXACT, "alice")) == (0, "", [
        ({"user": "alice"}, {"producer_byte_rate": 1024.0}),
        ({"user": "alice", "client-id": "app"}, {"consumer_byte_rate": 2048.0})])
    assert describe(core, ("user", EXACT, "alice"), strict=True)[2] == [
        ({"user": "alice"}, {"producer_byte_rate": 1024.0})]
    assert describe(core, ("user", DEFAULT, None))[2] == [
        ({"user": None}, {"request_percentage": 50.0})]
    # SPECIFIED matches any name, the default included
    assert [e for e, _ in describe(core, ("user", SPECIFIED, None), strict=True)[2]] == \
        [{"user": None}, {"user": "alice"}]
    assert describe(core, strict=True)[2] == []
    assert len(describe(core)[2]) == 3
    assert alter(core, ({"user": "alice"}, {"producer_byte_rate": None}),
                 ({"user": "bob"}, {"bogus": None})) == [
        ({"user": "alice"}, 0, None), ({"user": "bob"}, 0, None)]  # removing nothing is fine
    assert describe(core, ("user", EXACT, "alice"), strict=True)[2] == []  # its last value gone


def test_validate_only_checks_and_changes_nothing():
    core = make_core()
    assert alter(core, ({"client-id": "app"}, {"producer_byte_rate": 10.0}),
                 validate_only=True) == [({"client-id": "app"}, 0, None)]
    assert describe(core)[2] == []


@pytest.mark.parametrize("entity, ops, message", [
    ({}, {"producer_byte_rate": 1.0}, "Invalid empty client quota entity"),
    ({"group": "g"}, {"producer_byte_rate": 1.0}, "Unhandled client quota entity type: group"),
    ({"user": ""}, {"producer_byte_rate": 1.0}, "Empty user not supported"),
    ({"user": "u", "ip": "127.0.0.1"}, {"producer_byte_rate": 1.0},
     "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"),
    ({"ip": "not an address"}, {"connection_creation_rate": 1.0},
     "not an address is not a valid IP or resolvable host."),
    ({"user": "u"}, {"connection_creation_rate": 1.0},
     "Invalid configuration key connection_creation_rate"),
    ({"ip": "10.0.0.1"}, {"producer_byte_rate": 1.0},
     "Invalid configuration key producer_byte_rate"),
    ({"user": "u"}, {"producer_byte_rate": 0.0},
     "Quota producer_byte_rate must be greater than 0"),
    ({"user": "u"}, {"request_percentage": float("inf")},
     "Quota request_percentage must be a finite number"),
    ({"user": "u"}, {"producer_byte_rate": 1.5},
     "producer_byte_rate cannot be a fractional value."),
    ({"ip": "10.0.0.1"}, {"connection_creation_rate": 2.0 ** 31},
     "Proposed value for connection_creation_rate is too large for an INT."),
])
def test_alterations_kafka_refuses(entity, ops, message):
    core = make_core()
    [(_, code, said)] = alter(core, (entity, ops))
    assert (code, said) == (errors.INVALID_REQUEST, message)
    assert describe(core)[2] == []


def test_an_entity_twice_in_one_request_keeps_the_first_and_answers_once():
    core = make_core()
    assert alter(core, ({"user": "dave"}, {"producer_byte_rate": 100.0}),
                 ({"user": "dave"}, {"consumer_byte_rate": 200.0})) == [
        ({"user": "dave"}, errors.INVALID_REQUEST,
         "Ignoring duplicate entity ClientQuotaEntity(entries={user=dave})")]
    assert describe(core)[2] == [({"user": "dave"}, {"producer_byte_rate": 100.0})]


@pytest.mark.parametrize("components, code, message", [
    ([("", EXACT, "x")], errors.INVALID_REQUEST, "Invalid empty entity type."),
    ([("user", EXACT, "a"), ("user", EXACT, "b")], errors.INVALID_REQUEST,
     "Entity type user cannot appear more than once in the filter."),
    ([("group", EXACT, "g")], errors.UNSUPPORTED_VERSION, "Unsupported entity type group"),
    ([("user", EXACT, None)], errors.INVALID_REQUEST,
     "Request specified MATCH_TYPE_EXACT, but set match string to null."),
    ([("user", DEFAULT, "a")], errors.INVALID_REQUEST,
     "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."),
    ([("user", 7, None)], errors.INVALID_REQUEST, "Unknown match type 7"),
    ([("ip", SPECIFIED, None), ("user", SPECIFIED, None)], errors.INVALID_REQUEST,
     "Invalid entity filter component combination. IP filter component should not be used "
     "with user or clientId filter component."),
])
def test_filters_kafka_refuses(components, code, message):
    assert describe(make_core(), *components) == (code, message)


# -- measuring -----------------------------------------------------------------------------------

def test_a_rate_is_measured_over_at_least_ten_seconds_and_throttles_as_kafka_does():
    rate = Rate()
    for _ in range(11):
        rate.record(10013, 1000)
    measured, window = rate.measure(1023)
    assert window == 10023 and measured == pytest.approx(110143 / 10.023)
    # Kafka answered this very produce with 733 ms
    assert throttle_ms(measured, 10240, window) == 733
    # once eleven windows have passed with nothing recorded, the history is gone
    assert rate.measure(1000 + 11 * 1000)[0] == 0


def test_the_token_bucket_starts_full_and_refills_at_its_rate():
    bucket = TokenBucket(rate=1.0, now=0)
    assert bucket.burst == 11
    bucket.take(20, 0)
    assert bucket.deficit_ms(0) == 9000
    assert bucket.deficit_ms(4000) == 5000


# -- enforcement, through the front door ---------------------------------------------------------

def receive(core, api_key, version, body, *, client_id="pq", connection_id=1):
    """(the frame's size, the answer as the client reads it) of one request through
    :meth:`Core.receive`, where quotas are enforced."""
    frame = wire.encode_request(api_key, version, 5, client_id, body, size_prefix=False)
    outcome = core.receive(frame, Connection(0, connection_id))
    assert outcome.done
    value = outcome.value
    if not isinstance(value, (bytes, bytearray, memoryview, list)):
        return len(frame), value
    data = b"".join(value) if isinstance(value, list) else bytes(value)
    return len(frame), wire.decode_response(api_key, version, data[4:])[1]


def produce_body(topic: str, size: int):
    cls = wire.request_class(0)
    return cls(acks=-1, timeout_ms=1000, topic_data=[cls.TopicProduceData(
        name=topic, partition_data=[cls.PartitionProduceData(
            index=0, records=records.encode_batch([(None, b"x" * size, [], START_MS)]))])])


def test_a_producer_over_its_byte_rate_is_throttled_and_its_connection_muted():
    core = make_core()
    core.cluster.create_topic("t", 1, 1)
    assert alter(core, ({"client-id": "pq"}, {"producer_byte_rate": 10240.0})) == \
        [({"client-id": "pq"}, 0, None)]
    sizes, throttles = [], []
    for _ in range(11):
        size, answer = receive(core, 0, 9, produce_body("t", 10000))
        assert answer.responses[0].partition_responses[0].error_code == errors.NONE
        sizes.append(size)
        throttles.append(answer.throttle_time_ms)
    # ten requests are 10 s worth; the eleventh is over: (sum/10 - 10240) / 10240 * 10000 ms
    assert throttles[:10] == [0] * 10
    assert throttles[10] == round((sum(sizes) / 10 - 10240) / 10240 * 10000)
    now = core.clock.now_ms()
    assert core.quotas.muted_until(0, 1) == now + throttles[10]
    assert core.quotas.muted_until(0, 2) is None  # another connection is read
    core.clock.advance(throttles[10])
    assert core.quotas.muted_until(0, 1) is None
    # another client id is not held to it
    assert receive(core, 0, 9, produce_body("t", 10000), client_id="other")[1] \
        .throttle_time_ms == 0


def test_the_user_quota_comes_before_the_client_id_one_and_is_shared_by_its_clients():
    core = make_core()
    core.cluster.create_topic("t", 1, 1)
    alter(core, ({"user": None}, {"producer_byte_rate": 1000.0}),
          ({"client-id": "a"}, {"producer_byte_rate": 10 ** 9}))
    # PLAINTEXT clients are User:ANONYMOUS: the default user's quota, over both client ids
    receive(core, 0, 9, produce_body("t", 6000), client_id="a")
    _, second = receive(core, 0, 9, produce_body("t", 6000), client_id="b")
    assert second.throttle_time_ms > 0


def test_a_consumer_over_its_byte_rate_gets_an_empty_answer_with_the_throttle():
    core = make_core()
    core.cluster.create_topic("t", 1, 1)
    for _ in range(3):
        receive(core, 0, 9, produce_body("t", 4000), client_id="writer")
    alter(core, ({"client-id": "reader"}, {"consumer_byte_rate": 500.0}))
    cls = wire.request_class(1)
    topic_id = core.cluster.topics["t"].topic_id
    body = cls(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
               session_id=0, session_epoch=-1, topics=[cls.FetchTopic(
                   topic_id=topic_id, partitions=[cls.FetchPartition(
                       partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])
    _, first = receive(core, 1, 13, body, client_id="reader")
    # at most its quota over ten seconds (5000 bytes): one batch, and the throttle
    [topic] = first.responses
    assert len(list(records.iter_batches(bytes(topic.partitions[0].records)))) == 1
    assert first.throttle_time_ms == 0
    _, second = receive(core, 1, 13, body, client_id="reader", connection_id=2)
    assert (second.error_code, second.responses, second.session_id) == (0, [], 0)
    assert second.throttle_time_ms > 0
    assert core.quotas.muted_until(0, 2) == core.clock.now_ms() + second.throttle_time_ms


def test_a_fetch_capped_by_its_quota_leaves_the_same_request_uncapped_once_it_is_gone():
    # idle clients' Fetch bodies are decoded once and shared (Core.shared_bodies): the cap
    # must not stay on the shared body for the next request in the same bytes
    core = make_core()
    core.cluster.create_topic("t", 1, 1)
    for _ in range(3):
        receive(core, 0, 9, produce_body("t", 4000), client_id="writer")
    cls = wire.request_class(1)
    body = cls(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
               session_id=0, session_epoch=-1, topics=[cls.FetchTopic(
                   topic_id=core.cluster.topics["t"].topic_id, partitions=[cls.FetchPartition(
                       partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])

    def batches_read(connection_id: int) -> int:
        _, answer = receive(core, 1, 13, body, client_id="reader", connection_id=connection_id)
        return len(list(records.iter_batches(bytes(answer.responses[0].partitions[0].records))))
    assert batches_read(1) == 3
    alter(core, ({"client-id": "reader"}, {"consumer_byte_rate": 500.0}))
    assert batches_read(2) == 1  # capped at its quota's 5000 bytes
    alter(core, ({"client-id": "reader"}, {"consumer_byte_rate": None}))
    assert batches_read(3) == 3


def test_a_request_over_its_request_percentage_waits_one_window_at_most():
    core = make_core()
    alter(core, ({"client-id": "pq"}, {"request_percentage": 1e-9}))
    _, answer = receive(core, 3, 12, wire.request_class(3)(
        topics=[], allow_auto_topic_creation=False, include_topic_authorized_operations=False))
    assert answer.throttle_time_ms == 1000


def test_acks_zero_produces_mute_the_connection_without_an_answer():
    core = make_core()
    core.cluster.create_topic("t", 1, 1)
    alter(core, ({"client-id": "pq"}, {"producer_byte_rate": 100.0}))
    body = produce_body("t", 2000)
    body.acks = 0
    assert receive(core, 0, 9, body)[1] is NO_RESPONSE
    assert core.quotas.muted_until(0, 1) is not None


def create_topics(core, version, *names, partitions=1, validate_only=False):
    cls = wire.request_class(19)
    answer = send(core, 19, version, cls(timeout_ms=1000, validate_only=validate_only, topics=[
        cls.CreatableTopic(name=n, num_partitions=partitions, replication_factor=1)
        for n in names]))
    return [(t.name, t.error_code, t.error_message) for t in answer.topics], \
        answer.throttle_time_ms


def test_the_controller_mutation_quota_refuses_from_create_topics_v6():
    core = make_core()
    alter(core, ({"client-id": "app"}, {"controller_mutation_rate": 1.0}))
    # a burst of eleven partitions is allowed, and the request that goes below zero passes
    assert create_topics(core, 7, "big", partitions=20) == ([("big", 0, None)], 0)
    refused, throttle = create_topics(core, 7, "a", "b")
    assert refused == [("a", errors.THROTTLING_QUOTA_EXCEEDED, None),
                       ("b", errors.THROTTLING_QUOTA_EXCEEDED, None)]
    assert throttle == 9000  # nine tokens short at one a second
    assert "a" not in core.cluster.topics
    # before v6 the topic is made and the client throttled
    made, throttle = create_topics(core, 5, "c", partitions=2)
    assert made == [("c", 0, None)] and throttle == 11000
    core.clock.advance(11000)
    assert create_topics(core, 7, "d") == ([("d", 0, None)], 0)


def test_the_throttle_action_answers_with_a_throttle_and_mutes_the_connection():
    core = make_core()
    core.control.add({"api": "Metadata", "action": "throttle", "throttle_ms": 250})
    _, answer = receive(core, 3, 12, wire.request_class(3)(
        topics=[], allow_auto_topic_creation=False, include_topic_authorized_operations=False))
    assert answer.throttle_time_ms == 250
    assert core.quotas.muted_until(0, 1) == core.clock.now_ms() + 250
    _, after = receive(core, 3, 12, wire.request_class(3)(
        topics=[], allow_auto_topic_creation=False, include_topic_authorized_operations=False),
        connection_id=2)
    assert after.throttle_time_ms == 0  # the rule fired once
