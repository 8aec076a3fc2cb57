"""Request frames for fuzzing: valid requests of every (API, version) the broker serves, and
mutations of them.

Most mutations are made on the message, field by field (a null where the field is nullable,
an empty, huge or duplicated array, invalid UTF-8 or an overlong string, a number at the edge
of its type, an unknown topic or group), so that the frame still decodes and reaches a handler;
a few are made on the bytes (flipped, cut, grown, spliced), which mostly close the connection
at the decoder.  Everything comes from one seeded ``random.Random``: the same seed makes the
same frames.

Names come from small pools (topics ``fuzz-*``, groups ``fuzz-g*``), so that a long run touches
a bounded set of topics and groups (a broker rightly keeps every topic it auto-creates) and
never the topics or groups of the clients beside the fuzzer.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from typing import Any

import wire
from mockbroker.handlers import REGISTRY
from wire import records
from wire.definitions import APIS
from wire.schema import ZERO_UUID, Field

PRODUCE, FETCH, JOIN_GROUP, SYNC_GROUP = 0, 1, 11, 14
#: APIs whose answer may rightly wait (a Fetch long-poll, a rebalance)
PATIENT = frozenset({FETCH, JOIN_GROUP, SYNC_GROUP})

TOPICS = ("fuzz-0", "fuzz-1", "fuzz-2")
#: names no broker has: unknown, invalid or too long, all from a finite pool
ODD_NAMES = ("fuzz-unknown", "", ".", "..", "fuzz/slash", "fuzz\u00e9\u4e2d", "x" * 250,
             "fuzz-\udcff\udcfe", "__consumer_offsets", "fuzz-new-0", "fuzz-new-1",
             " fuzz-0", "fuzz-0\x00")
GROUPS = ("fuzz-g0", "fuzz-g1", "fuzz-g2")
CONFIG_KEYS = ("retention.ms", "cleanup.policy", "max.message.bytes", "segment.bytes",
               "compression.type", "min.insync.replicas", "fuzz.unknown.key",
               "group.session.timeout.ms")
CONFIG_VALUES = ("1000", "-1", "delete", "compact", "gzip", "zstd", "not-a-number",
                 "99999999999999999999", "")

_INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_UINTS = {"uint16": 16, "uint32": 32}
_TOPIC_FIELDS = frozenset({"name", "topic", "topic_name", "topic_names", "resource_name"})
_GROUP_FIELDS = frozenset({"group_id", "groups", "groups_names", "coordinator_keys"})
_WAITS = frozenset({"max_wait_ms", "timeout_ms", "rebalance_timeout_ms"})

CASES = [(r.api_key, v) for r in REGISTRY for v in range(r.min_version, r.max_version + 1)]

#: requests that, well formed, take the cluster apart as they would on Kafka (UnregisterBroker
#: of the broker the test's clients use): the field naming the broker is moved off the fuzzed
#: cluster's ids, so these APIs are fuzzed without leaving the broker unusable afterwards
_DISRUPTIVE = {64: "broker_id", 94: "controller_id"}



#: the ACL APIs, whose requests Kafka cannot even parse with an UNKNOWN (0) code in them
_ACL_CODES = {29: ("resource_type_filter", "pattern_type_filter", "operation",
                   "permission_type"),
              30: ("resource_type", "resource_pattern_type", "operation", "permission_type"),
              31: ("resource_type_filter", "pattern_type_filter", "operation",
                   "permission_type")}


def must_answer(api_key: int, body) -> bool | None:
    """Whether the broker must answer a request it decodes: False for an acks=0 Produce,
    None where Kafka rightly closes the connection instead (an ACL request holding an UNKNOWN
    code, which Kafka's request parsing refuses), True otherwise."""
    if api_key == PRODUCE:
        return getattr(body, "acks", 1) != 0
    fields = _ACL_CODES.get(api_key)
    if fields is not None:
        entries = {29: lambda b: [b], 30: lambda b: b.creations or [],
                   31: lambda b: b.filters or []}[api_key](body)
        if any(getattr(e, f, None) == 0 for e in entries for f in fields):
            return None
    return True

@dataclass(slots=True)
class Sample:
    """One frame to send, and what the fuzzer knows about it."""

    api_key: int
    api_version: int
    correlation_id: int
    #: the whole frame, size prefix included
    data: bytes
    #: "valid", "field" (a field-level mutation) or "bytes" (a byte-level mutation)
    kind: str
    #: whether the broker must answer it: True, False (an acks=0 Produce), None (it may
    #: rightly close the connection instead: an undecodable or unsupported frame)
    answered: bool | None
    #: what was mutated, for a report
    note: str = ""

    @property
    def patient(self) -> bool:
        return self.api_key in PATIENT


class FrameMaker:
    """Seeded frames; ``mutate`` of them field-level, ``byte_rate`` of them byte-level."""

    def __init__(self, seed: int, *, mutate: float = 0.6, byte_rate: float = 0.08,
                 huge: int = 1000, max_frame: int = 1 << 20, client_id: str = "fuzzer"):
        self.rng = random.Random(seed)
        self.mutate_rate = mutate
        self.byte_rate = byte_rate
        self.huge = huge
        self.max_frame = max_frame
        self.client_id = client_id
        self._correlation = 0
        self._batches = [self._batch(n, c) for n in (1, 3) for c in (0, 1, 3)]

    # -- valid messages --------------------------------------------------------------------------

    def _batch(self, count: int, compression: int) -> bytes:
        recs = [(f"k{i}".encode(), b"v" * (i + 1), [("h", b"1")], None) for i in range(count)]
        return records.encode_batch(recs, compression=compression)

    def _records(self) -> bytes | None:
        r = self.rng.random()
        if r < 0.7:
            return self.rng.choice(self._batches)
        batch = bytearray(self.rng.choice(self._batches))
        if r < 0.8:  # a corrupt CRC
            batch[-1] ^= 0xFF
        elif r < 0.9:  # a cut batch
            batch = batch[: self.rng.randrange(1, len(batch))]
        else:
            batch = bytearray(self.rng.randbytes(self.rng.randrange(0, 80)))
        return bytes(batch)

    def value(self, f: Field, version: int, owner) -> Any:
        """A plausible value for one field (arrays and structs built recursively)."""
        if f.is_array:
            n = self.rng.choice((1, 1, 2, 3)) if f.is_struct or f.name != "broker_ids" else 1
            return [self._element(f, version, owner) for _ in range(n)]
        return self._element(f, version, owner)

    def _element(self, f: Field, version: int, owner) -> Any:
        rng, name, t = self.rng, f.name, f.element_type
        if f.is_struct:
            sub = owner._struct_classes[t]
            return self.struct(sub, f.fields, version)
        if t == "string":
            if name in _TOPIC_FIELDS:
                return rng.choice(TOPICS)
            if name in _GROUP_FIELDS:
                return rng.choice(GROUPS)
            if name in ("member_id", "group_instance_id", "transactional_id"):
                return None if f.is_nullable(version) and rng.random() < 0.5 else \
                    rng.choice(("", "fuzz-member"))
            if name in ("key", "configuration_keys"):
                return rng.choice(CONFIG_KEYS)
            if name == "value":
                return rng.choice(CONFIG_VALUES)
            if name in ("protocol_type",):
                return "consumer"
            if name in ("protocol_name",):
                return rng.choice(("range", "roundrobin"))
            return rng.choice(("", "fuzz", "a-b.c_d"))
        if t in ("bytes",):
            return rng.randbytes(rng.randrange(0, 16))
        if t == "records":
            return self._records()
        if t == "uuid":
            return rng.choice((ZERO_UUID, uuid.UUID(int=rng.getrandbits(128))))
        if t == "bool":
            return rng.random() < 0.5
        if t == "float64":
            return rng.random()
        if name == "acks":
            return rng.choice((-1, 1, 0))
        if name in _WAITS:
            return rng.randrange(0, 50)
        if name == "session_timeout_ms":
            return rng.choice((6000, 10000, 45000))
        if name in ("transaction_timeout_ms",):
            return 60000
        if name in ("replication_factor",):
            return rng.choice((-1, 1))
        if name in ("num_partitions", "count"):
            return rng.choice((-1, 1, 2, 4))
        if name in ("producer_id", "producer_epoch", "replica_id"):
            return -1
        if name in ("max_bytes", "partition_max_bytes"):
            return rng.choice((1024, 1 << 20))
        if name in ("resource_type",):
            return rng.choice((2, 2, 4, 32))
        if t in _UINTS:  # a port, say: never negative
            return rng.choice((0, 1, 2, 3))
        return rng.choice((-1, 0, 0, 1, 2, 3))

    def struct(self, cls, fields, version: int):
        values = {f.name: self.value(f, version, cls) for f in fields if f.present(version)}
        return cls(**values)

    def valid(self, api_key: int, version: int):
        cls = wire.request_class(api_key)
        return self.struct(cls, APIS[api_key].request.fields, version)

    # -- field-level mutations -------------------------------------------------------------------

    def mutate(self, body, version: int) -> list[str]:
        """Mutate one to three fields somewhere in the message, in place; what was done."""
        done: list[str] = []
        for _ in range(self.rng.choice((1, 1, 2, 3))):
            spots = list(self._spots(body, version))
            if not spots:
                break
            owner, f = self.rng.choice(spots)
            done.append(self._mutate_field(owner, f, version))
        return done

    def _spots(self, obj, version: int):
        for f in obj._fields:
            if not f.present(version):
                continue
            yield obj, f
            value = getattr(obj, f.name)
            if f.is_struct:
                for item in (value if f.is_array else [value]) or ():
                    if item is not None:
                        yield from self._spots(item, version)

    def _mutate_field(self, owner, f: Field, version: int) -> str:
        rng, value = self.rng, getattr(owner, f.name)
        choices = []
        if f.is_nullable(version):
            choices.append("null")
        if f.is_array:
            choices += ["empty", "huge", "duplicate"]
        t = f.element_type
        if t == "string":
            choices += ["utf8", "odd-name", "long-string"]
        elif t in _INTS or t in _UINTS:
            choices += ["edge-int", "edge-int", "negative"]
        elif t in ("bytes", "records"):
            choices += ["junk-bytes"]
        elif t == "uuid":
            choices += ["random-uuid"]
        if not choices:
            choices = ["regenerate"]
        how = rng.choice(choices)
        new = value
        if how == "null":
            new = None
        elif how == "empty":
            new = []
        elif how == "huge":
            element = (value or [None])[0] if value else None
            if element is None:
                element = self._element(f, version, owner)
            new = [element] * rng.choice((self.huge // 20, self.huge // 20, self.huge // 20,
                                                 self.huge))
        elif how == "duplicate":
            new = list(value or [self._element(f, version, owner)])
            new.append(new[0])
        elif how in ("utf8", "odd-name", "long-string"):
            text = {"utf8": lambda: rng.choice(TOPICS + GROUPS) + "\udcff\udcc0\udc80",
                    "odd-name": lambda: rng.choice(ODD_NAMES),
                    "long-string": lambda: "y" * rng.choice((256, 4096, 32767))}[how]
            new = [text() for _ in (value or [0])] if f.is_array else text()
        elif how in ("edge-int", "negative"):
            bits = _INTS.get(t) or _UINTS.get(t)
            lo, hi = ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t in _INTS
                      else (0, (1 << bits) - 1))
            pick = (lambda: rng.choice((lo, hi, -1, 0, lo + 1, hi - 1, -2))) if how == "edge-int" \
                else (lambda: rng.randrange(lo, 0) if lo < 0 else hi)
            new = [max(lo, min(hi, pick())) for _ in (value or [0])] if f.is_array \
                else max(lo, min(hi, pick()))
        elif how == "junk-bytes":
            new = rng.randbytes(rng.choice((0, 7, 61, 300)))
        elif how == "random-uuid":
            u = uuid.UUID(int=rng.getrandbits(128))
            new = [u for _ in (value or [0])] if f.is_array else u
        else:
            new = self.value(f, version, owner)
        setattr(owner, f.name, new)
        return f"{f.name}:{how}"

    # -- frames ----------------------------------------------------------------------------------

    def next_correlation(self) -> int:
        self._correlation = (self._correlation + 1) & 0x7FFFFFFF
        return self._correlation

    def sample(self) -> Sample:
        rng = self.rng
        api_key, version = rng.choice(CASES)
        body = self.valid(api_key, version)
        kind, notes = "valid", []
        if rng.random() < self.mutate_rate:
            kind, notes = "field", self.mutate(body, version)
        field = _DISRUPTIVE.get(api_key)
        if field is not None and 0 <= getattr(body, field) < 100:
            setattr(body, field, 100 + getattr(body, field))
        cid = self.next_correlation()
        try:
            data = wire.encode_request(api_key, version, cid, self.client_id, body)
        except (wire.EncodeError, ValueError, OverflowError, TypeError) as exc:
            # a mutation the encoder cannot write (a string too long for its length prefix)
            data, notes = b"", [f"unencodable: {type(exc).__name__}"]
        if not data or len(data) > self.max_frame:
            # too big to be worth its time (a huge array of huge arrays): the valid message
            body = self.valid(api_key, version)
            kind, notes = "valid", notes + [f"{len(data)} bytes"]
            data = wire.encode_request(api_key, version, cid, self.client_id, body)
        answered = must_answer(api_key, body)
        sample = Sample(api_key, version, cid, data, kind, answered, ",".join(notes))
        if rng.random() < self.byte_rate:
            self._mutate_bytes(sample)
        return sample

    def _mutate_bytes(self, s: Sample) -> None:
        rng, frame = self.rng, bytearray(s.data[4:])
        how = rng.choice(("flip", "flip", "cut", "grow", "int32", "splice", "header"))
        # the request header (api key, version, correlation id) is the first 8 bytes
        body_at = min(len(frame), 8)
        if how == "flip" and len(frame) > body_at:
            for _ in range(rng.randrange(1, 4)):
                frame[rng.randrange(body_at, len(frame))] ^= 1 << rng.randrange(8)
        elif how == "cut":
            frame = frame[: rng.randrange(0, len(frame) + 1)]
        elif how == "grow":
            frame += rng.randbytes(rng.randrange(1, 64))
        elif how == "int32" and len(frame) >= body_at + 4:
            at = rng.randrange(body_at, len(frame) - 3)
            frame[at:at + 4] = rng.choice((b"\xff\xff\xff\xff", b"\x7f\xff\xff\xff",
                                           b"\x80\x00\x00\x00", b"\x00\x00\x00\x00"))
        elif how == "splice":
            at = rng.randrange(body_at, len(frame) + 1)
            frame = frame[:at] + rng.randbytes(rng.randrange(1, 16)) + frame[at:]
        elif how == "header" and len(frame) >= 4:
            frame[0:4] = rng.choice((b"\x00\x00", b"\x7f\xff", b"\x00\x12",
                                     s.data[4:6])) + rng.choice((b"\x00\x00", b"\x7f\xff",
                                                                 b"\xff\xff", b"\x00\x63"))
        s.data = len(frame).to_bytes(4, "big") + bytes(frame)
        s.kind, s.note = "bytes", how
        # What the broker must do with it now: decode it as the broker will.
        try:
            request = wire.decode_request(bytes(frame))
        except Exception:
            s.answered = None
            return
        h = request.header
        s.api_key, s.api_version, s.correlation_id = h.api_key, h.api_version, h.correlation_id
        if not REGISTRY.supports(h.api_key, h.api_version):
            s.answered = None
        else:
            s.answered = must_answer(h.api_key, request.body)
