"""ShareFetch and ShareAcknowledge on the brokers (Kafka's ``SharePartitionManager`` with
``KafkaApis``' handling of both): share sessions, the share partitions each leader holds, their
acquisition locks on the cluster's clock, and the long poll.

A share partition is made by the first ShareFetch that reaches its leader, from the state the
share coordinator keeps (:mod:`.coordinator`); it lives on that leader until leadership moves or
the topic goes, when it is dropped and the next leader reads the state again (acquisitions,
which Kafka never writes, are lost with it: those records are delivered again).  Nothing here
checks the group's membership, as Kafka's data path does not: the group coordinator hands out
partitions, the share partition hands out records.

The request's wire shapes are the handlers'; this module takes and gives plain values
(:class:`FetchAsk`, :class:`PartitionAnswer`).
"""

from __future__ import annotations

import logging
import uuid
from typing import Callable

from msgspec import Struct, field

from mockbroker.core.features import SHARE_DEAD_LETTER_LEVEL
from mockbroker.core.config.group import group_value
from mockbroker.core.deferred import Close, Deferred
from mockbroker.core.errors import ApiException
from mockbroker.core.share.coordinator import ShareCoordinator
from mockbroker.core.share.deadletter import TOPIC_NAME, DeadLetterQueue
from mockbroker.core.share.partition import Acquired, ShareConfig, SharePartition, StateBatch
from mockbroker.core.share.sessions import FINAL, INITIAL, ShareSession, ShareSessions
from mockbroker.core.share.state import AckType
from wire import errors

log = logging.getLogger("mockbroker.core")

Key = tuple[str, uuid.UUID, int]  # group id, topic id, partition
#: (first offset, last offset, acknowledge types) of one acknowledgement batch
AckBatch = tuple[int, int, list[int]]


class PartitionAsk(Struct):
    """A partition a ShareFetch or ShareAcknowledge names, and its acknowledgements."""

    topic_id: uuid.UUID
    index: int
    acks: list[AckBatch] = field(default_factory=list)


class FetchAsk(Struct):
    """A ShareFetch (or, with ``fetch`` False, a ShareAcknowledge) as the manager reads it."""

    group_id: str
    member_id: str
    epoch: int
    partitions: list[PartitionAsk]
    forget: list[tuple[uuid.UUID, int]] = field(default_factory=list)
    max_wait_ms: int = 0
    min_bytes: int = 0
    max_records: int = 500
    batch_size: int = 500
    record_limit: bool = False
    #: the request is RENEW acknowledgements only (v2): nothing is fetched
    renew: bool = False
    #: the highest acknowledge type the request's version may carry
    max_ack_type: int = AckType.REJECT
    fetch: bool = True
    #: topics the member may not READ (their partitions get TOPIC_AUTHORIZATION_FAILED)
    denied: frozenset[uuid.UUID] = frozenset()


class PartitionAnswer(Struct):
    topic_id: uuid.UUID
    index: int
    error_code: int = errors.NONE
    error_message: str | None = None
    ack_error_code: int = errors.NONE
    ack_error_message: str | None = None
    #: (leader id, leader epoch) for NOT_LEADER_OR_FOLLOWER
    leader: tuple[int, int] | None = None
    records: list[bytes] = field(default_factory=list)
    acquired: list[Acquired] = field(default_factory=list)


class FetchAnswer(Struct):
    error_code: int = errors.NONE
    error_message: str | None = None
    lock_duration_ms: int = 0
    partitions: list[PartitionAnswer] = field(default_factory=list)


class SharePartitions:
    """Every broker's share partitions and share sessions."""

    def __init__(self, cluster, settings: dict, coordinator: ShareCoordinator):
        self.cluster = cluster
        self.settings = settings
        self.coordinator = coordinator
        self.partitions: dict[Key, SharePartition] = {}
        self.sessions = ShareSessions(lambda: settings["group_share_max_share_sessions"])
        self._locks: dict[Key, object] = {}
        #: called on every share-partition change (acquire, acknowledge, release, expiry)
        self.listeners: list[Callable[[SharePartition, str, dict], None]] = []
        #: the share groups' dead-letter queues
        self.dead_letters = DeadLetterQueue(self)
        cluster.leadership_listeners.append(self._leadership_changed)
        cluster.topic_deleted_listeners.append(self._topic_deleted)

    @property
    def now(self) -> int:
        return self.cluster.clock.now_ms()

    # -- the share partitions -------------------------------------------------------------------

    def config(self, group_id: str, broker_id: int | None = None) -> ShareConfig:
        """The group's share configs now (worked out once until a config changes: every fetch
        and acknowledgement reads them)."""
        state = self.cluster.broker_configs
        broker = self.cluster.controller_id if broker_id is None else broker_id
        return state.kept(("share", group_id, broker),
                          lambda: self._config(state, self.cluster.features, group_id, broker))

    @staticmethod
    def _config(state, state_features, group_id: str, broker: int) -> ShareConfig:
        def value(name: str):
            return group_value(state, group_id, name, broker)

        return ShareConfig(
            lock_duration_ms=value("share.record.lock.duration.ms"),
            delivery_limit=value("share.delivery.count.limit"),
            max_locks=value("share.partition.max.record.locks"),
            auto_offset_reset=value("share.auto.offset.reset"),
            read_committed=value("share.isolation.level") == "read_committed",
            renew_enabled=value("share.renew.acknowledge.enable"),
            dead_letter=state_features.level("share.version") >= SHARE_DEAD_LETTER_LEVEL
            and value(TOPIC_NAME) != "")

    def find(self, group_id: str, topic_id: uuid.UUID, index: int) -> SharePartition | None:
        return self.partitions.get((group_id, topic_id, index))

    def of_group(self, group_id: str) -> list[SharePartition]:
        return [sp for (g, _, _), sp in self.partitions.items() if g == group_id]

    def _partition(self, topic_id: uuid.UUID, index: int, broker_id: int, out: PartitionAnswer):
        """The cluster's partition if ``broker_id`` leads it, else None with the error in
        ``out``."""
        topic = self.cluster.topics_by_id.get(topic_id)
        if topic is None:
            out.error_code = errors.UNKNOWN_TOPIC_ID
            return None
        if not 0 <= index < len(topic.partitions):
            out.error_code = errors.UNKNOWN_TOPIC_OR_PARTITION
            return None
        partition = topic.partitions[index]
        if partition.leader != broker_id:
            out.error_code = errors.NOT_LEADER_OR_FOLLOWER
            out.leader = (partition.leader, partition.leader_epoch)
            return None
        return partition

    def share_partition(self, group_id: str, partition) -> SharePartition:
        """The share partition of ``group_id`` over ``partition``, read from the share
        coordinator the first time; ApiException as the partition's error otherwise."""
        key = (group_id, partition.topic.topic_id, partition.index)
        found = self.partitions.get(key)
        if found is not None:
            return found
        try:
            state = self.coordinator.read(group_id, partition.topic.topic_id, partition.index,
                                          partition.leader_epoch)
        except ApiException as exc:
            if exc.error_code in (errors.NOT_COORDINATOR, errors.COORDINATOR_NOT_AVAILABLE,
                                  errors.COORDINATOR_LOAD_IN_PROGRESS):
                raise ApiException(errors.COORDINATOR_NOT_AVAILABLE) from None
            raise ApiException(errors.UNKNOWN_SERVER_ERROR, str(exc)) from None
        config = self.config(group_id)
        start = state.start_offset
        if start < 0:
            start = self._reset_offset(partition, config.auto_offset_reset)
        sp = SharePartition(group_id, partition, now=lambda: self.now, config=lambda: config_of(),
                            persist=self._persist, dead_letter=self.dead_letters.enqueue,
                            state_epoch=state.state_epoch,
                            start_offset=start, batches=list(state.batches))

        def config_of() -> ShareConfig:
            return self.config(group_id)

        sp.listeners.append(self._changed)
        self.partitions[key] = sp
        if state.start_offset < 0:
            # the resolved start is written now, so that a leader after this one starts there
            self._persist(sp, [])
        waiting = sp.archiving()
        if waiting:
            # read back with records still on their way to the dead-letter queue: they go on
            self.dead_letters.enqueue(sp, waiting)
        return sp

    def _reset_offset(self, partition, reset: str) -> int:
        """Where a share partition without a start begins (``share.auto.offset.reset``)."""
        log_ = partition.log
        if reset == "earliest":
            return log_.log_start_offset
        if reset.startswith("by_duration:"):
            found = log_.offset_for_timestamp(self.now - _duration_ms(reset[12:]))
            return found[0] if found else log_.high_watermark
        return log_.high_watermark

    def _persist(self, sp: SharePartition, batches: list[StateBatch]) -> None:
        done = sum(r.size for r in sp.runs if r.state.terminal)
        self.coordinator.write(sp.group_id, sp.topic_id, sp.index, sp.state_epoch,
                               sp.leader_epoch, sp.start_offset, batches, done)

    def _changed(self, sp: SharePartition, kind: str, detail: dict) -> None:
        self._arm(sp)
        for listener in list(self.listeners):
            listener(sp, kind, detail)

    def _arm(self, sp: SharePartition) -> None:
        """One timer per share partition, at its earliest lock deadline."""
        key = (sp.group_id, sp.topic_id, sp.index)
        old = self._locks.pop(key, None)
        if old is not None:
            old.cancel()
        deadline = sp.next_deadline()
        if deadline is None or self.partitions.get(key) is not sp:
            return

        def expire() -> None:
            self._locks.pop(key, None)
            if self.partitions.get(key) is sp:
                sp.expire_locks()
                self._arm(sp)

        self._locks[key] = self.cluster.timers.call_later(max(deadline - self.now, 0), expire)

    def forget(self, group_id: str, topic_id: uuid.UUID, index: int) -> None:
        """The share partition's state was set or deleted at the share coordinator: this
        leader lets it go, and the next fetch reads it again."""
        self._drop((group_id, topic_id, index))

    def _drop(self, key: Key) -> None:
        self.partitions.pop(key, None)
        timer = self._locks.pop(key, None)
        if timer is not None:
            timer.cancel()

    def _leadership_changed(self, partition) -> None:
        for key in [k for k in self.partitions
                    if k[1] == partition.topic.topic_id and k[2] == partition.index]:
            self._drop(key)

    def _topic_deleted(self, topic) -> None:
        for key in [k for k in self.partitions if k[1] == topic.topic_id]:
            self._drop(key)

    # -- sessions ending ------------------------------------------------------------------------

    def release(self, session: ShareSession) -> None:
        """A session ends: what its member holds in the session's partitions goes back."""
        self.sessions.close(session)
        for topic_id, index in session.partitions:
            sp = self.find(session.group_id, topic_id, index)
            if sp is not None:
                sp.release_member(session.member_id)

    def connection_closed(self, broker_id: int, connection_id: int) -> None:
        for session in self.sessions.of_connection(broker_id, connection_id):
            self.release(session)

    def broker_stopped(self, broker_id: int) -> None:
        for session in self.sessions.of_broker(broker_id):
            self.sessions.close(session)

    # -- ShareFetch and ShareAcknowledge --------------------------------------------------------

    def session_for(self, broker_id: int, connection_id: int, ask: FetchAsk) -> ShareSession:
        """The session a request runs in (opened, moved on, or found for closing), or
        ApiException with the top-level error."""
        named = [(p.topic_id, p.index) for p in ask.partitions]
        if not ask.fetch:  # ShareAcknowledge
            if ask.epoch == INITIAL:
                raise ApiException(errors.INVALID_SHARE_SESSION_EPOCH)
            session = self.sessions.find(broker_id, ask.group_id, ask.member_id)
            if ask.epoch != FINAL:
                self.sessions.advance(broker_id, ask.group_id, ask.member_id, ask.epoch)
            return session
        if ask.epoch == FINAL:
            return self.sessions.find(broker_id, ask.group_id, ask.member_id)
        if ask.epoch == INITIAL:
            if any(p.acks for p in ask.partitions):
                raise ApiException(errors.INVALID_REQUEST)
            return self.sessions.open(broker_id, ask.group_id, ask.member_id, connection_id,
                                      named)
        return self.sessions.advance(broker_id, ask.group_id, ask.member_id, ask.epoch,
                                     add=named, forget=ask.forget)

    def acknowledge(self, broker_id: int, ask: FetchAsk) -> dict[tuple[uuid.UUID, int],
                                                                 PartitionAnswer]:
        """The request's acknowledgements, partition by partition: the answers of those that
        carried any (their ack error fields)."""
        out: dict[tuple[uuid.UUID, int], PartitionAnswer] = {}
        for p in ask.partitions:
            if not p.acks:
                continue
            answer = out[(p.topic_id, p.index)] = PartitionAnswer(p.topic_id, p.index)
            code, message = self._acknowledge_one(broker_id, ask, p)
            answer.ack_error_code, answer.ack_error_message = code, message
        return out

    def _acknowledge_one(self, broker_id: int, ask: FetchAsk, p: PartitionAsk):
        topic = self.cluster.topics_by_id.get(p.topic_id)
        if topic is None:
            return errors.UNKNOWN_TOPIC_ID, None
        if not _valid_batches(p.acks, ask.max_ack_type, ask.renew):
            return errors.INVALID_REQUEST, None
        if p.topic_id in ask.denied:
            return errors.TOPIC_AUTHORIZATION_FAILED, None
        if not 0 <= p.index < len(topic.partitions):
            return errors.UNKNOWN_TOPIC_OR_PARTITION, None
        partition = topic.partitions[p.index]
        if partition.leader != broker_id:
            return errors.NOT_LEADER_OR_FOLLOWER, None
        sp = self.find(ask.group_id, p.topic_id, p.index)
        if sp is None:
            return errors.UNKNOWN_TOPIC_OR_PARTITION, None
        try:
            sp.acknowledge(ask.member_id, p.acks)
        except ApiException as exc:
            return exc.error_code, str(exc) or None
        return errors.NONE, None

    def fetch(self, broker_id: int, ask: FetchAsk, session: ShareSession,
              budget: list[int]) -> tuple[list[PartitionAnswer], int]:
        """Acquire records for the member from the partitions the request fetches (the
        request's own when it opens the session, else all the session's), sharing
        ``budget[0]`` records among them.  Returns the answers and how many acquired."""
        if ask.epoch == INITIAL:
            wanted = [(p.topic_id, p.index) for p in ask.partitions]
        else:
            wanted = list(session.partitions)
            if wanted and ask.epoch > 0:  # Kafka rotates the partitions for fairness
                turn = ask.epoch % len(wanted)
                wanted = wanted[turn:] + wanted[:turn]
        answers: list[PartitionAnswer] = []
        total = 0
        for topic_id, index in wanted:
            out = PartitionAnswer(topic_id, index)
            answers.append(out)
            if topic_id in ask.denied:
                out.error_code = errors.TOPIC_AUTHORIZATION_FAILED
                continue
            partition = self._partition(topic_id, index, broker_id, out)
            if partition is None:
                continue
            try:
                sp = self.share_partition(ask.group_id, partition)
            except ApiException as exc:
                out.error_code, out.error_message = exc.error_code, str(exc) or None
                continue
            if budget[0] <= 0:
                continue
            got = sp.acquire(ask.member_id, budget[0], ask.batch_size,
                             record_limit=ask.record_limit)
            if got:
                out.acquired = got
                out.records = sp.batches_for(got)
                taken = sum(a.last_offset - a.first_offset + 1 for a in got)
                budget[0] -= taken
                total += taken
        return answers, total

    def long_poll(self, ask: FetchAsk, topics: set, attempt: Callable[[], object | None],
                  respond: Callable[[], object]) -> Deferred:
        """Answer with ``attempt()`` once it returns an answer (after an append to one of
        ``topics`` or a change of one of the group's share partitions), else with
        ``respond()`` at ``max_wait_ms``."""
        deferred = Deferred()

        def finish(answer=None) -> None:
            self.cluster.append_listeners.discard(on_append)
            if on_change in self.listeners:
                self.listeners.remove(on_change)
            timer.cancel()
            try:
                answer = respond() if answer is None else answer
            except Exception as exc:  # a bug must not leave the fetch hanging
                log.exception("failed to answer a share fetch")
                answer = Close(f"failed to answer the share fetch: {exc!r}")
            deferred.resolve(answer)

        def retry() -> None:
            if deferred.done:
                return
            answer = attempt()
            if answer is not None:
                finish(answer)

        def on_append(partition) -> None:
            if partition.topic.topic_id in topics:
                retry()

        def on_change(sp: SharePartition, kind: str, detail: dict) -> None:
            if sp.group_id == ask.group_id and kind != "acquired":
                self.cluster.timers.call_later(0, retry)

        self.cluster.append_listeners.add(on_append)
        self.listeners.append(on_change)
        timer = self.cluster.timers.call_later(ask.max_wait_ms, finish)

        def cancel() -> None:
            self.cluster.append_listeners.discard(on_append)
            if on_change in self.listeners:
                self.listeners.remove(on_change)
            timer.cancel()

        deferred.on_cancel = cancel
        return deferred

    # -- control --------------------------------------------------------------------------------

    def expire_locks(self, group_id: str) -> int:
        """Every lock of the group's share partitions expires now."""
        return sum(sp.expire_now() for sp in self.of_group(group_id))


def _valid_batches(batches: list[AckBatch], max_type: int, renew: bool) -> bool:
    """Kafka's checks of a partition's acknowledgement batches before they reach it."""
    previous_last = None
    for first, last, types in batches:
        if first > last or (previous_last is not None and first < previous_last):
            return False
        if not types or (len(types) > 1 and last - first != len(types) - 1):
            return False
        if any(t < 0 or t > max_type or (t == AckType.RENEW and not renew) for t in types):
            return False
        previous_last = last
    return True


def _duration_ms(text: str) -> int:
    """An ISO-8601 duration (``PnDTnHnMn.nS``) in milliseconds."""
    import re

    m = re.fullmatch(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:[.,]\d{0,9})?)S)?)?",
                     text.upper())
    if not m:
        return 0
    days, hours, minutes, seconds = m.groups()
    total = int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes or 0) * 60
    return int((total + float((seconds or "0").replace(",", "."))) * 1000)
