"""The OpenTelemetry metrics a client pushes (OTLP ``MetricsData``, protobuf), read by hand.

A PushTelemetry request carries one ``MetricsData`` message: resources, each with attributes
and scopes, each scope with metrics, each metric a gauge, a sum, a histogram, an exponential
histogram or a summary of data points with attributes of their own.  Only what a user looks at
is read: names, units, descriptions, attributes, values and times; exemplars, schema URLs and
unknown fields are skipped, as protobuf readers skip what they do not know.

A protobuf message is a run of fields, each a varint key (field number << 3 | wire type) and a
value: a varint (0), eight little-endian bytes (1), a length and that many bytes (2), or four
little-endian bytes (5).  The field numbers below are those of OpenTelemetry's ``metrics/v1``,
``common/v1`` and ``resource/v1`` messages.  Decoding needs no protobuf runtime, so the broker
loads nothing more to receive telemetry.
"""

from __future__ import annotations

import base64
import struct
from typing import Any, Iterator

from msgspec import Struct

from mockbroker.core import protowire
from mockbroker.core.protowire import LEN

_DOUBLE = struct.Struct("<d")
_INT64 = struct.Struct("<q")
_UINT64 = struct.Struct("<Q")
_BITS64 = 1 << 64

#: Metric's data fields -> what the metric is
_KINDS = {5: "gauge", 7: "sum", 9: "histogram", 10: "exponential_histogram", 11: "summary"}
#: how deep attribute values (lists and maps of values) may nest: protobuf readers stop at 100
MAX_DEPTH = 64
#: AggregationTemporality
TEMPORALITY = {0: "unspecified", 1: "delta", 2: "cumulative"}


class OtlpError(protowire.WireError):
    """Bytes that are not a ``MetricsData`` message."""


class DataPoint(Struct):
    """One data point of one metric, flattened with what it belongs to."""

    name: str
    kind: str
    unit: str
    description: str
    attributes: dict[str, Any]
    #: a number for a gauge or a sum; a dict (count, sum, ...) for the others
    value: Any
    time_unix_nano: int
    start_time_unix_nano: int
    #: a sum's or histogram's aggregation temporality, a sum's monotonicity
    temporality: str | None = None
    monotonic: bool | None = None
    #: the attributes of the resource (the client) and the name of the scope it came in
    resource: dict[str, Any] = {}
    scope: str = ""


def _fields(data: memoryview) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value) of each field of a message
    (:func:`mockbroker.core.protowire.fields`)."""
    return protowire.fields(data, OtlpError)


def _signed(bits: int) -> int:
    return bits - _BITS64 if bits >= 1 << 63 else bits


def _double(bits: int) -> float:
    return _DOUBLE.unpack(_UINT64.pack(bits))[0]


def _text(value: Any) -> str:
    if not isinstance(value, memoryview):
        raise OtlpError("a string field that is not length-delimited")
    try:
        return bytes(value).decode()
    except UnicodeDecodeError:
        raise OtlpError("a string that is not UTF-8") from None


def _any_value(data: memoryview, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise OtlpError(f"attribute values nested over {MAX_DEPTH} deep")
    value: Any = None
    for number, wire_type, raw in _fields(data):
        if number == 1:
            value = _text(raw)
        elif number == 2:
            value = bool(raw)
        elif number == 3:
            value = _signed(raw)
        elif number == 4:
            value = _double(raw)
        elif number == 5:  # ArrayValue
            value = [_any_value(item, depth + 1) for n, _, item in _fields(raw) if n == 1]
        elif number == 6:  # KeyValueList
            value = _attributes((item for n, _, item in _fields(raw) if n == 1), depth + 1)
        elif number == 7:
            value = base64.b64encode(bytes(raw)).decode()
    return value


def _attributes(key_values, depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in key_values:
        key, value = "", None
        for number, _, raw in _fields(kv):
            if number == 1:
                key = _text(raw)
            elif number == 2:
                value = _any_value(raw, depth)
        out[key] = value
    return out


def _repeated_fixed(wire_type: int, raw: Any, fmt: struct.Struct) -> list:
    """A repeated fixed64 or double, packed (one length-delimited field) or not."""
    if wire_type == LEN:
        return [item[0] for item in fmt.iter_unpack(bytes(raw))]
    return [fmt.unpack(_UINT64.pack(raw))[0]]


def _number_point(data: memoryview) -> tuple[dict, Any, int, int]:
    attributes: list = []
    value: Any = None
    time = start = 0
    for number, wire_type, raw in _fields(data):
        if number == 7:
            attributes.append(raw)
        elif number == 2:
            start = raw
        elif number == 3:
            time = raw
        elif number == 4:
            value = _double(raw)
        elif number == 6:
            value = _signed(raw)
    return _attributes(attributes), value, time, start


def _histogram_point(data: memoryview) -> tuple[dict, Any, int, int]:
    attributes: list = []
    value: dict[str, Any] = {"count": 0, "sum": None, "min": None, "max": None,
                             "bucket_counts": [], "explicit_bounds": []}
    time = start = 0
    for number, wire_type, raw in _fields(data):
        if number == 9:
            attributes.append(raw)
        elif number == 2:
            start = raw
        elif number == 3:
            time = raw
        elif number == 4:
            value["count"] = raw
        elif number in (5, 11, 12):
            value[{5: "sum", 11: "min", 12: "max"}[number]] = _double(raw)
        elif number == 6:
            value["bucket_counts"] += _repeated_fixed(wire_type, raw, _UINT64)
        elif number == 7:
            value["explicit_bounds"] += _repeated_fixed(wire_type, raw, _DOUBLE)
    return _attributes(attributes), value, time, start


def _exponential_point(data: memoryview) -> tuple[dict, Any, int, int]:
    attributes: list = []
    value: dict[str, Any] = {"count": 0, "sum": None, "min": None, "max": None, "scale": 0,
                             "zero_count": 0}
    time = start = 0
    for number, _, raw in _fields(data):
        if number == 1:
            attributes.append(raw)
        elif number == 2:
            start = raw
        elif number == 3:
            time = raw
        elif number == 4:
            value["count"] = raw
        elif number in (5, 12, 13):
            value[{5: "sum", 12: "min", 13: "max"}[number]] = _double(raw)
        elif number == 6:  # sint32, zigzag
            value["scale"] = (raw >> 1) ^ -(raw & 1)
        elif number == 7:
            value["zero_count"] = raw
    return _attributes(attributes), value, time, start


def _summary_point(data: memoryview) -> tuple[dict, Any, int, int]:
    attributes: list = []
    value: dict[str, Any] = {"count": 0, "sum": 0.0, "quantiles": {}}
    time = start = 0
    for number, _, raw in _fields(data):
        if number == 7:
            attributes.append(raw)
        elif number == 2:
            start = raw
        elif number == 3:
            time = raw
        elif number == 4:
            value["count"] = raw
        elif number == 5:
            value["sum"] = _double(raw)
        elif number == 6:
            quantile = amount = 0.0
            for n, _, bits in _fields(raw):
                if n == 1:
                    quantile = _double(bits)
                elif n == 2:
                    amount = _double(bits)
            value["quantiles"][repr(quantile)] = amount
    return _attributes(attributes), value, time, start


_POINTS = {"gauge": _number_point, "sum": _number_point, "histogram": _histogram_point,
           "exponential_histogram": _exponential_point, "summary": _summary_point}


def _metric(data: memoryview, resource: dict, scope: str) -> list[DataPoint]:
    name = unit = description = ""
    kind, body = None, None
    for number, _, raw in _fields(data):
        if number == 1:
            name = _text(raw)
        elif number == 2:
            description = _text(raw)
        elif number == 3:
            unit = _text(raw)
        elif number in _KINDS:
            kind, body = _KINDS[number], raw
    if kind is None:
        return []
    points, temporality, monotonic = [], None, None
    for number, _, raw in _fields(body):
        if number == 1:
            points.append(raw)
        elif number == 2 and kind in ("sum", "histogram", "exponential_histogram"):
            temporality = TEMPORALITY.get(raw, str(raw))
        elif number == 3 and kind == "sum":
            monotonic = bool(raw)
    if kind == "sum" and monotonic is None:
        monotonic = False
    read = _POINTS[kind]
    out = []
    for point in points:
        attributes, value, time, start = read(point)
        out.append(DataPoint(name, kind, unit, description, attributes, value, time, start,
                             temporality, monotonic, resource, scope))
    return out


def decode_metrics_data(data: bytes) -> list[DataPoint]:
    """Every data point of a ``MetricsData`` message, in the order they come; raises
    :class:`OtlpError` for bytes that are not one."""
    out: list[DataPoint] = []
    try:
        for number, _, resource_metrics in _fields(memoryview(data)):
            if number != 1:
                continue
            resource: dict[str, Any] = {}
            scopes = []
            for n, _, raw in _fields(resource_metrics):
                if n == 1:
                    resource = _attributes(a for k, _, a in _fields(raw) if k == 1)
                elif n == 2:
                    scopes.append(raw)
            for scope_metrics in scopes:
                scope, metrics = "", []
                for n, _, raw in _fields(scope_metrics):
                    if n == 1:
                        scope = next((_text(v) for k, _, v in _fields(raw) if k == 1), "")
                    elif n == 2:
                        metrics.append(raw)
                for metric in metrics:
                    out.extend(_metric(metric, resource, scope))
    except (TypeError, struct.error) as exc:  # a field of the wrong wire type
        raise OtlpError(f"not a MetricsData message: {exc}") from None
    return out
