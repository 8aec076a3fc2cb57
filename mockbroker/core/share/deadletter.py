"""The share groups' dead-letter queue (KIP-1191; Kafka's ``ShareGroupDLQManager``).

A share group whose ``errors.deadletterqueue.topic.name`` names a topic, on a cluster at
``share.version`` 2, does not drop what it gives up on: a record a member rejects, or one whose
delivery count reached the limit, waits as Archiving while the broker produces a record for it
to the queue's topic, then becomes Archived.  The queue's record has no key or value unless the
group's ``errors.deadletterqueue.copy.record.enable`` asks for the original's (its headers are
never copied), a timestamp of now, and headers that tell where it came from:

| header | value |
|---|---|
| ``__dlq.errors.topic`` | the record's topic |
| ``__dlq.errors.partition`` | its partition |
| ``__dlq.errors.offset`` | its offset |
| ``__dlq.errors.group`` | the share group |
| ``__dlq.errors.delivery.count`` | how many times it was delivered |
| ``__dlq.errors.message`` | why: rejected by the client, or its delivery count at the limit |

It goes to partition ``record's partition % the queue's partitions``.  The queue is refused,
with the message Kafka logs, when its name starts with ``__``, lacks the broker's
``errors.deadletterqueue.topic.name.prefix`` (``dlq.`` by default), names a topic without
``errors.deadletterqueue.group.enable=true``, or names no topic while the broker's
``errors.deadletterqueue.auto.create.topics.enable`` is off (the default); with it on, the topic
is created with that config and the broker's defaults.  Refused or failed, the records are
archived regardless, as in Kafka; the ``share_dead_lettered`` event says which happened.

Kafka's broker produces asynchronously, through its own network client; here the write runs on
a timer at once after the change that made the records Archiving, so the state written to the
share coordinator goes Archiving, then Archived, as Kafka writes it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mockbroker.core.config.group import group_value
from mockbroker.core.datapath.produce import append_records, topic_config
from mockbroker.core.errors import ApiException
from mockbroker.core.share.partition import DeadLetterRange, SharePartition
from wire import errors, records

if TYPE_CHECKING:
    from mockbroker.core.share.manager import SharePartitions

log = logging.getLogger("mockbroker.core")

TOPIC_NAME = "errors.deadletterqueue.topic.name"
COPY_RECORD = "errors.deadletterqueue.copy.record.enable"
#: the topic config that lets a topic be a dead-letter queue
TOPIC_ENABLE = "errors.deadletterqueue.group.enable"
AUTO_CREATE = "errors.deadletterqueue.auto.create.topics.enable"
PREFIX = "errors.deadletterqueue.topic.name.prefix"
#: the client id the broker's own produce carries (it is no client's)
CLIENT_ID = "__share_group_dlq"
#: a batch's size before its records (Kafka's ``DefaultRecordBatch`` overhead)
BATCH_OVERHEAD = 61


class Refused(Exception):
    """The group's dead-letter queue cannot take records: Kafka's message for why."""


class DeadLetterQueue:
    """Writes share partitions' Archiving records to their groups' dead-letter queues."""

    def __init__(self, manager: "SharePartitions"):
        self.manager = manager
        self.cluster = manager.cluster
        #: records written to each group's queue
        self.written: dict[str, int] = {}

    def enqueue(self, sp: SharePartition, ranges: list[DeadLetterRange]) -> None:
        """Queue ``ranges`` of ``sp``: written right after the change that made them Archiving
        (the state saying so is written first)."""
        for found in ranges:
            self.cluster.timers.call_later(0, lambda r=found: self._deliver(sp, r))

    def _deliver(self, sp: SharePartition, found: DeadLetterRange) -> None:
        manager = self.manager
        key = (sp.group_id, sp.topic_id, sp.index)
        if manager.partitions.get(key) is not sp:
            return  # the share partition moved or went: its next leader resumes the records
        topic, error = None, None
        try:
            topic = self._queue_topic(sp.group_id, sp.partition.leader)
            self._write(sp, found, topic)
        except Refused as exc:
            error = str(exc)
            log.error("share group %s: failed to write offsets %d-%d of %s-%d to its "
                      "dead-letter queue, archiving them regardless: %s", sp.group_id,
                      found.first_offset, found.last_offset, sp.partition.topic.name, sp.index,
                      error)
        else:
            self.written[sp.group_id] = self.written.get(sp.group_id, 0) + \
                found.last_offset - found.first_offset + 1
        sp.dead_lettered(found.first_offset, found.last_offset, queue=topic, error=error,
                         reason=found.reason.value)

    # -- the queue's topic ----------------------------------------------------------------------

    def _queue_topic(self, group_id: str, broker: int) -> str:
        """The group's queue topic, checked and created as Kafka's broker ``broker`` (the
        share partition's leader) does."""
        cluster = self.cluster
        state = cluster.broker_configs
        name = group_value(state, group_id, TOPIC_NAME, broker)
        if not name:
            raise Refused(f"Configured DLQ topic name in share group: {group_id} is empty.")
        if name.startswith("__"):
            raise Refused(f"Configured DLQ topic name in share group: {group_id} cannot start "
                          f"with __, topic: {name}.")
        topic = cluster.topics.get(name)
        if topic is not None and topic.configs.get(TOPIC_ENABLE, "false") != "true":
            raise Refused(f"DLQ is not enabled on configured DLQ topic for share group: "
                          f"{group_id}, topic: {name}.")
        effective = state.effective(broker)
        if topic is None and effective.get(AUTO_CREATE, "false") != "true":
            raise Refused("DLQ topic does not exist and auto create is disabled on cluster for "
                          f"share group: {group_id}, topic: {name}.")
        prefix = effective.get(PREFIX, "")
        if prefix and not name.startswith(prefix):
            raise Refused("Configured DLQ topic name does not comply with the DLQ topic prefix "
                          f"in share group: {group_id}, topic: {name}, prefix: {prefix}.")
        if topic is None:
            try:
                cluster.create_topic(name, configs={TOPIC_ENABLE: "true",
                                                    "message.timestamp.type": "CreateTime"})
            except ApiException as exc:
                raise Refused(f"Unable to create DLQ topic {name}: {exc}") from None
        return name

    # -- the records ----------------------------------------------------------------------------

    def _write(self, sp: SharePartition, found: DeadLetterRange, name: str) -> None:
        cluster = self.cluster
        queue = cluster.topics[name]
        partition = queue.partitions[sp.index % len(queue.partitions)]
        copy = group_value(cluster.broker_configs, sp.group_id, COPY_RECORD,
                           sp.partition.leader)
        originals = _originals(sp, found) if copy else {}
        now = cluster.clock.now_ms()
        entries = []
        for offset in range(found.first_offset, found.last_offset + 1):
            key, value = originals.get(offset, (None, None))
            entries.append((key, value, _headers(sp, found, offset), now))
        max_bytes = topic_config(cluster, partition, partition.leader).max_message_bytes
        for batch in _batches(entries, max_bytes):
            appended = append_records(cluster, partition, batch, acks=-1,
                                      broker_id=partition.leader, client_id=CLIENT_ID,
                                      now_ms=now)
            if appended.error_code != errors.NONE:
                error = errors.error_by_code(appended.error_code).name
                raise Refused(f"Unable to produce to DLQ topic {name} partition "
                              f"{partition.index}: {error}"
                              + (f" ({appended.reason})" if appended.reason else ""))


def _headers(sp: SharePartition, found: DeadLetterRange, offset: int) -> list:
    return [("__dlq.errors.topic", sp.partition.topic.name.encode()),
            ("__dlq.errors.partition", str(sp.index).encode()),
            ("__dlq.errors.offset", str(offset).encode()),
            ("__dlq.errors.group", sp.group_id.encode()),
            ("__dlq.errors.delivery.count", str(found.delivery_count).encode()),
            ("__dlq.errors.message", found.reason.value.encode())]


def _originals(sp: SharePartition, found: DeadLetterRange) -> dict[int, tuple]:
    """offset -> (key, value) of the records the log still has in the range."""
    out: dict[int, tuple] = {}
    log_ = sp.partition.log
    for batch in log_.stored_from(found.first_offset, found.last_offset + 1):
        header = records.read_batch_header(batch.data)
        if header.is_control:
            continue
        for record in records.decode_records(batch.data, verify_crc=False):
            if found.first_offset <= record.offset <= found.last_offset:
                out[record.offset] = (record.key, record.value)
    return out


def _batches(entries: list, max_bytes: int) -> list[bytes]:
    """The records as batches of at most ``max_bytes`` each, filled in order as Kafka's broker
    fills them (a record too large on its own goes alone, for the topic to refuse)."""
    sizes = [len(records.encode_batch([entry])) - BATCH_OVERHEAD for entry in entries]
    out: list[bytes] = []
    start = 0
    while start < len(entries):
        end, size = start + 1, BATCH_OVERHEAD + sizes[start]
        while end < len(entries) and size + sizes[end] <= max_bytes:
            size += sizes[end]
            end += 1
        batch = records.encode_batch(entries[start:end])
        while len(batch) > max_bytes and end - start > 1:  # the deltas grew a record
            end -= 1
            batch = records.encode_batch(entries[start:end])
        out.append(batch)
        start = end
    return out
