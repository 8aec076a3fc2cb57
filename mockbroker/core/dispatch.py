"""The core's front door: a request frame in, one outcome out.

:class:`Core` owns the cluster state and dispatches through the handler registry it is given
(the core never imports the handlers).  Nothing here touches sockets or the event loop: the I/O
layer hands :meth:`Core.receive` a frame and gets a :class:`~mockbroker.core.deferred.Deferred`
back, which resolves to the response frame, :data:`~mockbroker.core.deferred.NO_RESPONSE`, or a
:class:`~mockbroker.core.deferred.Close` — now or later, never an exception.  Tests and
in-process tools call :meth:`Core.handle` with a decoded request and read the response message.
"""

from __future__ import annotations

import copy
import logging
import time
from functools import cached_property
from typing import TYPE_CHECKING, Any

from msgspec import Struct
from msgspec.structs import replace as msgspec_replace

import wire
from mockbroker.adminapi.actions import passive_names
from mockbroker.core.clock import Clock
from mockbroker.core.cluster import Broker, Cluster
from mockbroker.core.groups.coordinator import GroupCoordinator
from mockbroker.core.coordinators.placement import SHARE_STATE_TOPIC, TRANSACTION_TOPIC
from mockbroker.core.deferred import NO_RESPONSE, Close, Deferred, as_deferred, later
from mockbroker.core.context import InjectedError, RequestContext
from mockbroker.core.control.rules import ControlTable, apply
from mockbroker.core.observe.events import EventLog
from mockbroker.core.datapath.producers import ProducerIds
from mockbroker.core.control.request_names import named_groups
from mockbroker.core.observe.requests import LoggedRequest, RequestLog
from mockbroker.core.quotas import manager as quota
from mockbroker.core.security import ANONYMOUS, Principal
from mockbroker.core.security.config import Security, SecuritySettings
from mockbroker.core.security.sasl import SaslSession
from mockbroker.core.kafka_version import release_name
from mockbroker.core.settings import resolve_settings
from mockbroker.core.observe.watch import GROUP_REQUESTS, UNCHANGED_WHEN_NONE, GroupWatch
from wire import Request, RequestHeader, SharedBodies
from wire.apis import API_KEYS, API_NAMES

if TYPE_CHECKING:
    from mockbroker.core.datapath.fetch_sessions import FetchSessions
    from mockbroker.core.share.coordinator import ShareCoordinator
    from mockbroker.core.share.manager import SharePartitions
    from mockbroker.core.telemetry.manager import Telemetry
    from mockbroker.core.transactions.coordinator import TransactionCoordinator

log = logging.getLogger("mockbroker.core")

#: rule actions that change nothing beyond the request they pick (after any other, the group
#: watch looks at every group)
PASSIVE_ACTIONS = passive_names()
PRODUCE_KEY, FETCH_KEY = 0, 1
#: the requests whose bodies :attr:`Core.shared_bodies` shares, which clients repeat word for
#: word: Fetch (an idle consumer's long poll), ListOffsets (Spark asks for the latest offsets
#: every micro-batch), Metadata (every refresh) and Heartbeat
SHARED_BODIES = frozenset(API_KEYS[name] for name in ("Fetch", "ListOffsets", "Metadata",
                                                     "Heartbeat"))


class Connection(Struct, frozen=True):
    """A client connection as the core knows it."""

    broker_id: int
    connection_id: int
    client_host: str = "127.0.0.1"
    #: the listener it came in on
    listener: str = "PLAINTEXT"
    #: who it is before any SASL: a TLS client certificate's subject, or User:ANONYMOUS
    principal: Principal = ANONYMOUS
    #: its authentication, on a SASL listener
    sasl: SaslSession | None = None
    #: its listener writes an answer given as a list of buffers one after another (see
    #: :meth:`Core.receive`)
    pieces: bool = False
    #: the client's port (client telemetry subscriptions match on it)
    client_port: int | None = None

    @property
    def who(self) -> Principal:
        """Its principal now: the SASL one once authenticated, else :attr:`principal`."""
        sasl = self.sasl
        return sasl.principal if sasl is not None and sasl.principal is not None \
            else self.principal


class Core:
    """The whole cluster as a sans-IO state machine."""

    def __init__(self, brokers: list[Broker], settings: dict[str, Any] | None = None,
                 clock: Clock | None = None, *, registry,
                 security: SecuritySettings | None = None, events: EventLog | None = None):
        self.settings = resolve_settings(settings or {})
        #: the Kafka release the brokers behave as (``kafka_version``: 4.0)
        self.kafka_version = release_name(self.settings["kafka_version"])
        self.cluster = Cluster(self.settings, brokers, clock, events=events)
        #: what happened, in order: ``GET /events``, waits, the dashboard
        self.events = self.cluster.events
        self.security = Security(security, self.cluster.clock)
        self.registry = registry
        self.groups = GroupCoordinator(self.cluster, self.settings)
        self.groups.share_states_of = lambda: self.share_states
        self.groups.share_partitions_of = lambda: self.__dict__.get("share_partitions")
        self.producers = ProducerIds()
        # the transaction coordinator is built by the first request that needs it, or by the
        # creation of __transaction_state, whose partitions it must load
        self.cluster.partitions_added_listeners.append(self._partitions_added)
        self.control = ControlTable(self)
        self.requests = RequestLog()
        #: tells the event log how groups change, after each request, timer or call
        self.watch = GroupWatch(self, self.events)
        self.groups.timers.after_fire = self._look_after_timer
        #: called with (broker id, alive) when a broker stops or starts; the I/O layer closes
        #: or reopens its listener
        self.broker_watchers: list = []
        #: client quotas, and the connections muted for a throttle
        self.quotas = quota.Quotas(lambda: self.cluster.clock.now_ms())
        #: (broker id, connection id) -> (software name, version) its ApiVersions gave
        self.client_software: dict[tuple[int, int], tuple[str, str]] = {}
        #: ApiVersions answers, encoded, by what they rest on (every new connection asks)
        self.api_versions_answers: dict[tuple, Any] = {}
        #: the bodies of the requests idle clients repeat word for word, each decoded once;
        #: their handlers (and whatever they hand a body on to) only ever read it
        self.shared_bodies = SharedBodies(SHARED_BODIES)

    @property
    def clock(self) -> Clock:
        return self.cluster.clock

    @cached_property
    def transactions(self) -> TransactionCoordinator:
        """The transaction coordinator, with its modules: loaded when first needed."""
        from mockbroker.core.transactions.coordinator import TransactionCoordinator

        coordinator = TransactionCoordinator(self.cluster, self.settings, self.producers)
        coordinator.offsets_marker_listeners.append(self.groups.on_transaction_marker)
        return coordinator

    @cached_property
    def telemetry(self) -> Telemetry:
        """Client telemetry (KIP-714): built with the first telemetry request."""
        from mockbroker.core.telemetry.manager import Telemetry

        return Telemetry(self.cluster.broker_configs, self.settings, self.events)

    @cached_property
    def share_states(self) -> ShareCoordinator:
        """The share coordinator (KIP-932): every share partition's state, over
        ``__share_group_state``; built when first needed."""
        from mockbroker.core.share.coordinator import ShareCoordinator

        coordinator = ShareCoordinator(self.cluster, self.settings)
        topic = self.cluster.topics.get(coordinator.topic_name)
        if topic is not None:  # created before: its partitions load now
            coordinator.partitions_added(topic, topic.partitions)
        return coordinator

    @cached_property
    def share_partitions(self) -> SharePartitions:
        """The share partitions and share sessions of every broker, made with the first
        ShareFetch."""
        from mockbroker.core.share.manager import SharePartitions

        partitions = SharePartitions(self.cluster, self.settings, self.share_states)
        partitions.listeners.append(self._share_event)
        return partitions

    def _share_event(self, sp, kind: str, detail: dict) -> None:
        self.events.emit("share_" + kind, group=sp.group_id, topic=sp.partition.topic.name,
                         partition=sp.index, **detail)

    def _partitions_added(self, topic, partitions) -> None:
        # once built, the transaction and share coordinators follow their topics themselves
        if topic.name == TRANSACTION_TOPIC and "transactions" not in self.__dict__:
            self.transactions.partitions_added(topic, partitions)
        elif topic.name == SHARE_STATE_TOPIC and "share_states" not in self.__dict__:
            self.share_states.partitions_added(topic, partitions)

    def connection_closed(self, conn: "Connection") -> None:
        """A client connection ended: the share sessions it opened end with it, and what
        their members held is released."""
        self.quotas.connection_closed(conn.broker_id, conn.connection_id)
        self.client_software.pop((conn.broker_id, conn.connection_id), None)
        if "telemetry" in self.__dict__:
            self.telemetry.connection_closed(conn.broker_id, conn.connection_id)
        shares = self.__dict__.get("share_partitions")
        if shares is not None:
            shares.connection_closed(conn.broker_id, conn.connection_id)
            self.watch.look(None)

    @cached_property
    def fetch_sessions(self) -> FetchSessions:
        """Every broker's incremental fetch sessions (KIP-227), made with the first Fetch."""
        from mockbroker.core.datapath.fetch_sessions import FetchSessions

        return FetchSessions(self.settings["max_incremental_fetch_session_cache_slots"])

    @property
    def timers(self):
        return self.cluster.timers

    def _look_after_timer(self, group_id: str | None) -> None:
        self.watch.look(None if group_id is None else (group_id,))

    # -- brokers going down and coming back ------------------------------------------------------

    def stop_broker(self, node_id: int, *, controlled: bool = False) -> None:
        """A broker dies (or with ``controlled``, shuts down cleanly): its leadership and
        coordination move to live brokers, and its listener closes (with every connection)."""
        self.cluster.stop_broker(node_id, controlled=controlled)
        self.fetch_sessions.close_broker(node_id)
        shares = self.__dict__.get("share_partitions")
        if shares is not None:
            shares.broker_stopped(node_id)
        for watcher in list(self.broker_watchers):
            watcher(node_id, False)

    def start_broker(self, node_id: int) -> None:
        """A stopped broker comes back on its port: its replicas rejoin their ISRs, and it
        leads again where it is preferred at the next preferred-leader election."""
        self.cluster.start_broker(node_id)
        for watcher in list(self.broker_watchers):
            watcher(node_id, True)

    # -- bytes in, bytes out ---------------------------------------------------------------------

    def new_session(self) -> SaslSession:
        """The authentication of a new connection to a SASL listener."""
        return SaslSession(self.security)

    def receive(self, frame: bytes, conn: Connection) -> Deferred:
        """One request frame (without its size prefix): a Deferred of the response frame (a
        bytearray, written out as it is), :data:`NO_RESPONSE`, or a :class:`Close`.  For a
        connection with :attr:`Connection.pieces`, a frame with record batches (a Fetch answer)
        is the list of buffers it is made of, the stored batches among them uncopied."""
        sasl = conn.sasl
        if sasl is not None:
            now = self.clock.now_ms()
            if sasl.authenticated and sasl.expired(now):
                return Deferred.resolved(Close("its SASL session expired"))
            if sasl.takes(frame):
                return sasl.receive(frame, self, conn)
        try:
            request = wire.decode_request(frame, shared=self.shared_bodies)
        except (wire.UnsupportedVersionError, wire.UnknownApiKeyError) as exc:
            return self.unsupported(exc.header, conn, str(exc))
        except wire.DecodeError as exc:
            return Deferred.resolved(Close(f"undecodable request ({exc})"))
        header = request.header
        served = self.registry.served(header.api_key, self.kafka_version)
        if served is None or not served[0] <= header.api_version <= served[1]:
            # a version the codec reads but this broker (or its Kafka release) does not serve
            return self.unsupported(header, conn, f"{API_NAMES.get(header.api_key)} "
                                                  f"v{header.api_version}")
        ctx = self.context(header, conn)
        if self.quotas.entities:
            return self._receive_under_quotas(request, ctx, len(frame), conn.pieces)
        logged, result = self._handle_served(request, ctx, self.registry.get(header.api_key))
        if isinstance(result, Deferred):
            if not result._done:
                return self._encoded_later(result, header, logged, conn.pieces)
            result = result._value
        # answered at once, the common case: no Deferred in between, no callback to keep
        if result is None:
            result = NO_RESPONSE
        logged.finish(result)
        if isinstance(result, Close) or result is NO_RESPONSE:
            return Deferred.resolved(result)
        return Deferred.resolved(self._encode(header, result, logged, conn.pieces))

    def _encoded_later(self, outcome: Deferred, header: RequestHeader, logged: LoggedRequest,
                       pieces: bool) -> Deferred:
        """The answer frame of a request answered later (a long poll, a JoinGroup): its log
        entry is finished and its response encoded once ``outcome`` resolves, in one step."""
        answer = Deferred()
        answer.on_cancel = outcome.cancel

        def done(value: Any) -> None:
            logged.finish(value)
            if not isinstance(value, Close) and value is not NO_RESPONSE:
                value = self._encode(header, value, logged, pieces)
            answer.resolve(value)

        outcome.add_callback(done)
        return answer

    def _receive_under_quotas(self, request: Request, ctx: RequestContext, size: int,
                              pieces: bool) -> Deferred:
        """A request while some client quota is set: measured against the quotas of its
        principal and client id, its answer given at once with ``throttle_time_ms`` and its
        connection muted for that long when it went over (KIP-219)."""
        quotas = self.quotas
        header = request.header
        user, client_id, broker = ctx.principal.name, header.client_id or "", ctx.broker_id
        body = request.body
        api = header.api_key
        if api == FETCH_KEY:
            limit = quotas.fetch_limit(broker, user, client_id)
            if limit is not None and body.max_bytes > limit:
                # a copy: the body decoded may be shared (Core.shared_bodies)
                body = copy.copy(body)
                body.max_bytes = limit
                request = msgspec_replace(request, body=body)
        started = time.perf_counter_ns()
        logged, outcome = self._handle(request, ctx)
        spent = (time.perf_counter_ns() - started) * 100 / 1e9  # % of one thread x seconds
        if api == PRODUCE_KEY and body.acks == 0:
            # no answer: the bandwidth throttle mutes the connection all the same, and the
            # request quota is not applied (as in Kafka)
            quotas.mute(broker, ctx.connection_id,
                        quotas.record(quota.PRODUCE, broker, user, client_id, size))
            return outcome

        def answer(response):
            throttle = quotas.record(quota.REQUEST, broker, user, client_id, spent)
            if api == PRODUCE_KEY:
                throttle = max(throttle, quotas.record(quota.PRODUCE, broker, user, client_id,
                                                       size))
            elif api == FETCH_KEY:
                encoded = self._encode(header, response, logged, pieces)
                if isinstance(encoded, Close):
                    return encoded
                sent = len(encoded) if not isinstance(encoded, list) else \
                    sum(len(piece) for piece in encoded)
                throttle = max(throttle, quotas.record(quota.FETCH, broker, user, client_id,
                                                       sent))
                if throttle == 0:
                    return encoded
                # answered empty, and what it would have carried is not counted
                quotas.unrecord(quota.FETCH, broker, user, client_id, sent)
                response = wire.response_class(FETCH_KEY)(
                    throttle_time_ms=throttle, error_code=0, responses=[],
                    session_id=body.session_id if body.session_epoch > 0 else 0)
            if throttle > 0:
                quotas.mute(broker, ctx.connection_id, throttle)
                response = quota.with_throttle(response, throttle)
            return self._encode(header, response, logged, pieces)

        return outcome.map(answer)

    def context(self, header: RequestHeader, conn: Connection) -> RequestContext:
        """What handlers know of a request on ``conn`` besides its body: who sent it, on which
        listener, and its connection's SASL session."""
        sasl = conn.sasl
        return RequestContext(conn.broker_id, conn.connection_id, header.client_id,
                              header.api_version, self.clock.now_ms(), conn.client_host,
                              conn.who, conn.listener,
                              sasl.mechanism if sasl is not None else None, sasl,
                              client_port=conn.client_port)

    def _encode(self, header: RequestHeader, response: Any, logged: LoggedRequest | None,
                pieces: bool) -> bytes | list | Close:
        try:
            return wire.encode_response(header.api_key, header.api_version,
                                        header.correlation_id, response, copy=False,
                                        pieces=pieces)
        except Exception as exc:
            log.exception("failed to encode the %s v%d response",
                          API_NAMES.get(header.api_key, header.api_key), header.api_version)
            if logged is not None:
                logged.outcome = "failed"  # a bug of ours, as much as a handler's exception
            return Close(f"failed to encode the response: {exc!r}")

    def unsupported(self, header: RequestHeader, conn: Connection, why: str) -> Deferred:
        """A request in an API or version the codec or the broker does not serve: logged, then
        answered if the API has a fallback (ApiVersions, KIP-511), else its connection closes."""
        logged = self.requests.record(self.clock.now_ms(), conn.broker_id, header.api_key,
                                      header.api_version, header.correlation_id,
                                      header.client_id)
        logged.outcome = "unsupported"
        entry = self.registry.get(header.api_key)
        if entry is not None and entry.unsupported is not None:
            version, response = entry.unsupported(self, header)
            return Deferred.resolved(wire.encode_response(header.api_key, version,
                                                          header.correlation_id, response))
        return Deferred.resolved(Close(f"{why}: not served"))

    # -- decoded requests ------------------------------------------------------------------------

    def handle(self, request: Request, ctx: RequestContext) -> Deferred:
        """The outcome of one decoded request: a Deferred of the response message,
        :data:`NO_RESPONSE` or a :class:`Close`."""
        return self._handle(request, ctx)[1]

    def _handle(self, request: Request,
                ctx: RequestContext) -> tuple[LoggedRequest | None, Deferred]:
        api_key, version = request.api_key, request.api_version
        entry = self.registry.get(api_key)
        served = None if entry is None else self.registry.served(api_key, self.kafka_version)
        if served is None or not served[0] <= version <= served[1]:
            return None, self.unsupported(
                request.header, Connection(ctx.broker_id, ctx.connection_id, ctx.client_host),
                f"{API_NAMES.get(api_key, api_key)} v{version}")
        logged, result = self._handle_served(request, ctx, entry)
        outcome = as_deferred(result)
        outcome.add_callback(logged.finish)
        return logged, outcome

    def _handle_served(self, request: Request, ctx: RequestContext,
                       entry) -> tuple[LoggedRequest, Any]:
        """A request in a version this broker serves (:meth:`receive` has checked), logged
        and handled: its log entry, which the caller finishes with the answer, and what the
        handler gave (a response, None for no answer, a :class:`Close`, or a Deferred of
        one)."""
        api_key = request.api_key
        principal = ctx.principal
        logged = self.requests.record(
            ctx.now_ms, ctx.broker_id, api_key, request.api_version,
            request.header.correlation_id, ctx.client_id,
            "User:ANONYMOUS" if principal is ANONYMOUS else str(principal), ctx.listener,
            ctx.mechanism)
        name = API_NAMES.get(api_key) or str(api_key)
        body = request.body
        # everything this request causes says so in its events
        saved_cause = self.events.swap_cause({
            "request": name, "broker": ctx.broker_id, "client_id": ctx.client_id,
            "member_id": getattr(body, "member_id", None)})
        try:
            return logged, self._answer(request, ctx, entry, logged, name)
        finally:
            self.events.swap_cause(saved_cause)

    def _answer(self, request: Request, ctx: RequestContext, entry, logged: LoggedRequest,
                name: str) -> Any:
        api_key, version = request.api_key, request.api_version
        if not self.cluster.features.serves(api_key):
            entry = _feature_off(entry)
        rule = result = None
        try:
            delay = 0
            if self.control:
                delay, rule, fired = self.control.pick(api_key, ctx.broker_id, ctx.client_id,
                                                       request.body, str(ctx.principal))
                logged.rules = [r.id for r in fired]
                if rule is not None:
                    self.events.cause["action"] = rule.action
            if rule is None:
                result = entry.handler(self, ctx, request.body)
            else:
                logged.fault = rule.id
                result = apply(self, self.control, rule, entry.handler, request, ctx)
                if rule.action == "drop":
                    logged.outcome = "dropped"
            if delay:
                result = later(self.timers, result, delay)
        except Exception as exc:
            # A bug of ours must not take the broker down: this connection is closed, as Kafka
            # closes one whose request it failed to process, and everything else goes on.
            log.exception("failed to handle %s v%d", API_NAMES.get(api_key, api_key), version)
            logged.outcome = "failed"
            result = Close(f"failed to handle the request: {exc!r}")
        finally:
            if rule is not None and rule.action not in PASSIVE_ACTIONS:
                self.watch.look(None)  # a control action may have moved or expired anything
            elif name in GROUP_REQUESTS and not (
                    name in UNCHANGED_WHEN_NONE and getattr(result, "error_code", None) == 0):
                self.watch.look(named_groups(request.body))
        return result


def _feature_off(entry):
    """An API whose feature is at level 0 (UpdateFeatures lowered ``group.version`` or
    ``share.version``, or the emulated Kafka release leaves it at 0 or has no such feature):
    every request is answered UNSUPPORTED_VERSION with no message, in the API's own error
    shape, as Kafka answers before any other check."""
    from mockbroker.core.control import error_responses

    def refuse(core, ctx, body):
        response = error_responses.error_response(entry.api_key, ctx.api_version, body,
                                                  wire.errors.UNSUPPORTED_VERSION,
                                                  entry.error_shape)
        if getattr(response, "member_id", None) is not None:
            response.member_id = None  # Kafka's heartbeat answer names no member
        return response

    return msgspec_replace(entry, handler=refuse)


__all__ = ["Core", "Connection", "RequestContext", "InjectedError", "NO_RESPONSE", "Close",
           "Deferred"]
