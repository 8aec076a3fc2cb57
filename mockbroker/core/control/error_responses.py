"""Responses that carry an injected error, shaped as the real broker shapes its own errors.

A fault that answers a request with an error must answer in that API's own way, where Kafka's
own error answer to that request (the request class's ``getErrorResponse``) puts it: a Produce
error sits on each partition, a JoinGroup error at the top, a DescribeGroups error on each group.
Each handler declares its API's shape beside itself when it registers
(``REGISTRY.handler(..., errors=...)``); an API that declares none has the top-level shape:

* **partitioned** (:class:`PartitionShape`): the request names topics and partitions and the
  response mirrors them with an error per partition (Produce, Fetch, ListOffsets, OffsetCommit,
  TxnOffsetCommit, DeleteRecords, OffsetForLeaderEpoch, DescribeProducers).  Only the
  partitions a fault targets get the error; the rest of the request is served as usual (see
  :func:`split_partitioned` and :func:`merge_partitioned`).
* **keyed** (a tuple of :class:`KeyedShape`): the request lists groups, topics, keys, config
  resources, ACLs, users or transactional ids and the response has one entry with an error for
  each (DescribeGroups, DeleteGroups, FindCoordinator v4+, OffsetFetch v8+, CreateTopics,
  DeleteTopics, CreatePartitions, the config and ACL APIs, DescribeTopicPartitions,
  DescribeTransactions, ConsumerGroupDescribe), or for each item of a list inside an entry
  (WriteTxnMarkers: each partition of each topic of each marker; AddPartitionsToTxn v0-3 and
  OffsetFetch v1: each partition asked for).  The whole request fails.  The first shape of the
  tuple that a version has applies; a version that has none of them has the top-level shape.
* **top-level**: one ``error_code`` for the whole response (JoinGroup, SyncGroup, Heartbeat,
  LeaveGroup, InitProducerId, ListGroups, AddPartitionsToTxn v4+, ...).  A keyed shape sets it
  too where the response has it (DescribeUserScramCredentials, as Kafka does).
* **topic errors** (:class:`TopicErrors`, Metadata): answered by the real handler, then the
  error is set on the matching topics, so the client still learns the brokers.
* **the handler's own** (:class:`OwnAnswer`): what no declaration says, the handler module
  builds (AlterUserScramCredentials names each user once; DescribeLogDirs v1-2 have no
  top-level error, so the log dir carries it).

Every version of every API mockbroker serves has a place for an error;
:class:`CannotExpress` is for a declaration that leaves a version without one.  Fields Kafka fills
with -1 in its error responses (offsets, epochs, ids, node ids) get -1 here too.
"""

from __future__ import annotations

from typing import Any, Callable

from msgspec import Struct
from msgspec.structs import replace

from mockbroker.core.context import InjectedError
from mockbroker.core.control.request_names import topic_name
from mockbroker.core.deferred import Close, Deferred
from wire.codec import request_class, response_class
from wire.definitions import APIS
from wire.protocol import Encoded

_INT_TYPES = frozenset({"int8", "int16", "int32", "int64"})
#: Fields that Kafka's error responses hold at -1 rather than 0.
_MINUS_ONE = frozenset({
    "base_offset", "log_append_time_ms", "log_start_offset", "high_watermark",
    "last_stable_offset", "offset", "timestamp", "leader_epoch", "end_offset", "low_watermark",
    "committed_offset", "committed_leader_epoch", "preferred_read_replica", "node_id", "port",
    "producer_id", "producer_epoch", "generation_id", "num_partitions", "replication_factor",
    "leader_id",
})


class PartitionShape(Struct, frozen=True):
    """Where a partitioned API names topics and partitions in its request and its response.
    ``request_index`` is None where the request lists its partitions as plain indexes
    (DescribeProducers)."""

    request_topics: str
    request_name: str
    request_partitions: str
    request_index: str | None
    response_topics: str
    response_name: str
    response_partitions: str
    response_index: str
    #: Fetch: the handler applies an injected error itself (``ctx.injected``), because the
    #: partitions a fetch reads are its session's, not only those its request names
    handler_injects: bool = False
    #: Produce: with acks=0 there is no answer to carry an error, so the connection is closed
    acks_zero_closes: bool = False


class KeyedShape(Struct, frozen=True):
    """A request list (of names, or of structs) answered by one response entry per item.
    ``request_key`` is None when the request list holds plain strings or indexes; the response
    entry then gets the item in ``response_key``.  Struct items copy every field the two share.
    It applies to the versions whose request and response both have their list."""

    request_list: str
    request_key: str | None
    response_list: str
    response_key: str
    #: a list each item holds in turn, answered inside the item's entry the same way (a
    #: WriteTxnMarkers marker's topics, and a topic's partitions); the error goes on the
    #: entries of every level that has the field
    inner: KeyedShape | None = None
    #: the entry's field for the error (AddPartitionsToTxn v0-3: ``partition_error_code``)
    error: str = "error_code"
    #: the last version it applies to, where later ones still have both lists but Kafka
    #: answers them otherwise (OffsetFetch v2-7: at the top)
    until: int | None = None


class TopicErrors(Struct, frozen=True):
    """Metadata's shape: the real answer, with the error set on the topics the fault picks (so
    the client still learns the brokers)."""


class OwnAnswer(Struct, frozen=True):
    """An error answer the handler module builds itself, where the shapes above cannot say it:
    ``build(version, request, error_code) -> response``."""

    build: Callable[[int, Any, int], Any]


#: what a handler may declare as its API's error shape
ErrorShape = PartitionShape | tuple[KeyedShape, ...] | TopicErrors | OwnAnswer | None


class CannotExpress(Exception):
    """This version of the API's response has no place for an error."""


def _field(cls, name: str):
    for f in cls._fields:
        if f.name == name:
            return f
    return None


def _present(cls, name: str, version: int) -> bool:
    f = _field(cls, name)
    return f is not None and f.present(version)


def _element_class(cls, list_name: str):
    return cls._struct_classes[_field(cls, list_name).element_type]


def _blank(cls, error_code: int, error_field: str = "error_code"):
    """A response entry that says only ``error_code`` (in ``error_field``, where it has one),
    with Kafka's -1s."""
    entry = cls()
    for f in cls._fields:
        if f.name in _MINUS_ONE and f.type in _INT_TYPES:
            setattr(entry, f.name, -1)
        elif f.name == "records":
            setattr(entry, f.name, None)
    if _field(cls, error_field) is not None:
        setattr(entry, error_field, error_code)
    return entry


def can_express(api_key: int, version: int, shape: ErrorShape) -> bool:
    """Whether an error fault can be answered for this API version."""
    if isinstance(shape, (PartitionShape, TopicErrors, OwnAnswer)):
        return True
    request_cls, response_cls = _classes(api_key)
    if _keyed_shape(shape, version, request_cls, response_cls) is not None:
        return True
    return _present(response_cls, "error_code", version)


def _classes(api_key: int):
    return request_class(api_key), response_class(api_key)


def cannot_express(registration) -> str | None:
    """Why an error rule for a served API (its registry entry) is refused, naming the versions
    whose responses have no place for the error; None when every version has one."""
    mute = [version for version in range(registration.min_version,
                                         registration.max_version + 1)
            if not can_express(registration.api_key, version, registration.error_shape)]
    if not mute:
        return None
    return (f"{APIS[registration.api_key].name} {', '.join(f'v{v}' for v in mute)} "
            f"responses have no place for an error")


def _keyed_shape(shapes, version, request_cls, response_cls) -> KeyedShape | None:
    for shape in shapes if isinstance(shapes, tuple) else ():
        if shape.until is not None and version > shape.until:
            continue
        if _present(request_cls, shape.request_list, version) and \
                _present(response_cls, shape.response_list, version):
            return shape
    return None


def _index(shape: PartitionShape, partition) -> int:
    """A request partition's index (the item itself where the request lists plain indexes)."""
    return partition if shape.request_index is None else getattr(partition, shape.request_index)


# -- partitioned APIs -------------------------------------------------------------------------

def request_partitions(shape: PartitionShape, body, topic_of: Callable[[Any], str | None]):
    """(topic name, partition) for every partition a partitioned request names.  ``topic_of``
    turns a request topic struct into its name (resolving topic ids)."""
    for topic in getattr(body, shape.request_topics) or ():
        name = topic_of(topic, shape.request_name)
        for partition in getattr(topic, shape.request_partitions) or ():
            yield name, _index(shape, partition)


def split_partitioned(shape: PartitionShape, body, hit: Callable[[Any, Any], bool]):
    """Split a partitioned request into (the request without the hit partitions, the hit
    (topic struct, partition struct) pairs).  The first is None when nothing is left."""
    kept_topics, hit_pairs = [], []
    for topic in getattr(body, shape.request_topics) or ():
        kept = []
        for partition in getattr(topic, shape.request_partitions) or ():
            if hit(topic, partition):
                hit_pairs.append((topic, partition))
            else:
                kept.append(partition)
        if kept:
            kept_topics.append(_copy(topic, **{shape.request_partitions: kept}))
    rest = _copy(body, **{shape.request_topics: kept_topics}) if kept_topics else None
    return rest, hit_pairs


def merge_partitioned(api_key: int, shape: PartitionShape, response, hit_pairs,
                      error_code: int):
    """Add an error entry for each hit partition to ``response`` (a response object of the API,
    or None to build one)."""
    response_cls = response_class(api_key)
    if response is None:
        response = _blank(response_cls, 0)
    topic_cls = _element_class(response_cls, shape.response_topics)
    partition_cls = _element_class(topic_cls, shape.response_partitions)
    topics = getattr(response, shape.response_topics)
    for request_topic, request_partition in hit_pairs:
        name = getattr(request_topic, shape.request_name, None)
        topic_id = getattr(request_topic, "topic_id", None)
        target = None
        for candidate in topics:
            if getattr(candidate, shape.response_name) == name and \
                    getattr(candidate, "topic_id", None) == topic_id:
                target = candidate
                break
        if target is None:
            target = topic_cls()
            setattr(target, shape.response_name, name)
            if _field(topic_cls, "topic_id") is not None and topic_id is not None:
                target.topic_id = topic_id
            topics.append(target)
        entry = _blank(partition_cls, error_code)
        setattr(entry, shape.response_index, _index(shape, request_partition))
        getattr(target, shape.response_partitions).append(entry)
    return response


# -- everything else --------------------------------------------------------------------------

def error_response(api_key: int, version: int, body, error_code: int, shapes: ErrorShape = None):
    """The whole response for a request of a keyed, top-level or handler-built API answered
    with ``error_code``; raises :class:`CannotExpress` when the version has no place for it."""
    if isinstance(shapes, OwnAnswer):
        return shapes.build(version, body, error_code)
    request_cls, response_cls = _classes(api_key)
    shape = _keyed_shape(shapes, version, request_cls, response_cls)
    response = _blank(response_cls, error_code)
    if shape is not None:
        setattr(response, shape.response_list, _entries(
            shape, getattr(body, shape.request_list),
            _element_class(response_cls, shape.response_list), error_code))
        return response
    if not _present(response_cls, "error_code", version):
        raise CannotExpress(f"{APIS[api_key].name} v{version} has no error code to set")
    if _field(response_cls, "member_id") is not None and hasattr(body, "member_id"):
        response.member_id = body.member_id  # JoinGroup: the client keeps the id it sent
    for name in ("protocol_type", "protocol_name"):
        f = _field(response_cls, name)
        if f is not None and f.is_nullable(version):
            setattr(response, name, None)
    return response


def _entries(shape: KeyedShape, items, entry_cls, error_code: int) -> list:
    """An entry of ``entry_cls`` for each request item, with the error, and the entries of its
    inner list inside it."""
    inner = shape.inner
    entries = []
    for item in items or ():
        entry = _blank(entry_cls, error_code, shape.error)
        if shape.request_key is None:
            setattr(entry, shape.response_key, item)
        else:
            for f in entry_cls._fields:
                if not f.is_struct and f.name != shape.error and hasattr(item, f.name):
                    setattr(entry, f.name, getattr(item, f.name))
        if inner is not None:
            setattr(entry, inner.response_list, _entries(
                inner, getattr(item, inner.request_list),
                _element_class(entry_cls, inner.response_list), error_code))
        entries.append(entry)
    return entries


def with_topic_errors(response, error_code: int, wanted: Callable[[str | None], bool]):
    """Metadata: the real answer with ``error_code`` on every topic ``wanted`` picks (and no
    partitions, as Kafka answers a topic in error).  The answer may be one the broker keeps
    encoded for every client that asks: the errors go on a copy, never into what is kept."""
    if isinstance(response, Encoded):
        response = response.message
    topics = [_copy(topic, error_code=error_code, partitions=[]) if wanted(topic.name) else topic
              for topic in response.topics]
    return _copy(response, topics=topics)


def _copy(struct, **changes):
    clone = type(struct).__new__(type(struct))
    for name in struct._field_names:
        setattr(clone, name, changes.get(name, getattr(struct, name)))
    clone._unknown_tags = struct._unknown_tags
    return clone


# -- answering a picked request ------------------------------------------------------------

def answer_with_error(core, rule_id: int, code: int,
                      hits: Callable[[str | None, int | None], bool], handler, request, ctx):
    """``request`` answered with rule ``rule_id``'s error ``code``, in the API's shape: for APIs
    that name partitions, only those the rule ``hits`` (topic, partition) fail and the rest is
    handled as usual."""
    api_key, version, body = request.api_key, request.api_version, request.body
    shape = core.registry.get(api_key).error_shape
    if isinstance(shape, PartitionShape) and shape.handler_injects:
        injected = InjectedError(code, hits)
        return handler(core, replace(ctx, injected=injected), body)
    if isinstance(shape, PartitionShape):
        rest, hit = split_partitioned(
            shape, body, lambda topic, partition: hits(
                topic_name(core.cluster, topic, shape.request_name),
                _index(shape, partition)))
        result = handler(core, ctx, rest) if rest is not None else None
        if shape.acks_zero_closes and body.acks == 0:
            return Close(f"rule {rule_id}: a request with acks=0 failed")
        if isinstance(result, Deferred):
            return result.map(
                lambda value: merge_partitioned(api_key, shape, value, hit, code))
        return merge_partitioned(api_key, shape, result, hit, code)
    if isinstance(shape, TopicErrors):
        return with_topic_errors(handler(core, ctx, body), code, lambda name: hits(name, None))
    try:
        return error_response(api_key, version, body, code, shape)
    except CannotExpress as exc:
        return Close(f"rule {rule_id}: {exc}")
