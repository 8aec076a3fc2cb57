"""Client quota entities and their values (DescribeClientQuotas and AlterClientQuotas, as
Kafka's controller keeps them in ``ClientQuotaControlManager`` and its brokers read them).

An entity is a user, a client id, both, or an IP address; a name of None is the default entity
of its type (``--entity-default``).  Each holds quota values by key, as doubles:

| key | entities | kind |
|---|---|---|
| ``producer_byte_rate``, ``consumer_byte_rate`` | user, client-id, or both | whole bytes/s |
| ``request_percentage`` | user, client-id, or both | % of one request thread |
| ``controller_mutation_rate`` | user, client-id, or both | partitions/s |
| ``connection_creation_rate`` | ip | whole connections/s |

Alterations are checked as Kafka checks them, with its messages (INVALID_REQUEST), one entity
at a time: an entity whose operations fail changes nothing, the others go through.  An entity
whose last value is removed is gone.
"""

from __future__ import annotations

import ipaddress
import math
from typing import Iterable

from msgspec import Struct

from mockbroker.core.errors import ApiException
from wire import errors

USER, CLIENT_ID, IP = "user", "client-id", "ip"
#: the order entity types are shown in (``kafka-configs.sh`` shows them so)
TYPES = (USER, CLIENT_ID, IP)
#: key -> whether it must be a whole number that fits an INT (connections) or a LONG (bytes)
CLIENT_KEYS = {"producer_byte_rate": "LONG", "consumer_byte_rate": "LONG",
               "request_percentage": None, "controller_mutation_rate": None}
IP_KEYS = {"connection_creation_rate": "INT"}
_LIMITS = {"INT": 2 ** 31 - 1, "LONG": float(2 ** 63 - 1)}

#: ((type, name or None), ...) in TYPES order
Entity = tuple[tuple[str, "str | None"], ...]

EXACT, DEFAULT, SPECIFIED = 0, 1, 2


def entity(components: Iterable[tuple[str, str | None]]) -> Entity:
    """An entity from (type, name) pairs in any order (a type given twice: the last wins, as
    Kafka reads a request's entity into a map)."""
    named: dict[str, str | None] = {}
    for kind, name in components:
        named[kind] = name
    return tuple(sorted(named.items(), key=lambda c: TYPES.index(c[0])
                        if c[0] in TYPES else len(TYPES)))


def describe_entity(e: Entity) -> str:
    """Java's ``ClientQuotaEntity.toString``, as Kafka's messages quote an entity."""
    return "ClientQuotaEntity(entries={" + ", ".join(
        f"{kind}={name}" for kind, name in e) + "})"


class FilterComponent(Struct, frozen=True):
    entity_type: str
    match_type: int
    match: str | None = None


class AlterOp(Struct, frozen=True):
    key: str
    value: float
    remove: bool = False


class ClientQuotas:
    """Every quota entity the cluster knows, and their values."""

    def __init__(self) -> None:
        self.values: dict[Entity, dict[str, float]] = {}
        #: bumped on every change, so that what is worked out from the values is redone
        self.version = 0

    def __bool__(self) -> bool:
        return bool(self.values)

    # -- DescribeClientQuotas -------------------------------------------------------------------

    def describe(self, components: list[FilterComponent], strict: bool
                 ) -> list[tuple[Entity, dict[str, float]]]:
        """The entities a filter matches (ApiException with Kafka's error for a bad one)."""
        seen: set[str] = set()
        for c in components:
            if c.entity_type == "":
                raise ApiException(errors.INVALID_REQUEST, "Invalid empty entity type.")
            if c.entity_type in seen:
                raise ApiException(errors.INVALID_REQUEST, f"Entity type {c.entity_type} "
                                   "cannot appear more than once in the filter.")
            seen.add(c.entity_type)
            if c.entity_type not in TYPES:
                raise ApiException(errors.UNSUPPORTED_VERSION,
                                   f"Unsupported entity type {c.entity_type}")
            if c.match_type == EXACT and c.match is None:
                raise ApiException(errors.INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, "
                                   "but set match string to null.")
            if c.match_type == DEFAULT and c.match is not None:
                raise ApiException(errors.INVALID_REQUEST, "Request specified "
                                   "MATCH_TYPE_DEFAULT, but also specified a match string.")
            if c.match_type == SPECIFIED and c.match is not None:
                raise ApiException(errors.INVALID_REQUEST, "Request specified "
                                   "MATCH_TYPE_SPECIFIED, but also specified a match string.")
            if c.match_type not in (EXACT, DEFAULT, SPECIFIED):
                raise ApiException(errors.INVALID_REQUEST, f"Unknown match type {c.match_type}")
        if IP in seen and (USER in seen or CLIENT_ID in seen):
            raise ApiException(errors.INVALID_REQUEST, "Invalid entity filter component "
                               "combination. IP filter component should not be used with user "
                               "or clientId filter component.")
        if strict and not components:
            return []
        out = []
        for e, values in sorted(self.values.items(), key=lambda item: _sort_key(item[0])):
            names = dict(e)
            if strict and len(names) != len(components):
                continue
            if all(_matches(c, names) for c in components):
                out.append((e, dict(values)))
        return out

    # -- AlterClientQuotas ----------------------------------------------------------------------

    def alter(self, entries: list[tuple[Entity, list[AlterOp]]], validate_only: bool
              ) -> list[tuple[Entity, int, str | None]]:
        """Each entity's result: (entity, error code, message), one per distinct entity."""
        results: dict[Entity, tuple[int, str | None]] = {}
        for e, ops in entries:
            keys = [op.key for op in ops]
            if e in results or len(set(keys)) != len(keys):
                results[e] = (errors.INVALID_REQUEST,
                              f"Ignoring duplicate entity {describe_entity(e)}")
                continue
            try:
                changes = self._check(e, ops)
            except ApiException as exc:
                results[e] = (exc.error_code, str(exc))
                continue
            results[e] = (errors.NONE, None)
            if not validate_only:
                self._apply(e, changes)
        return [(e, code, message) for e, (code, message) in results.items()]

    def _check(self, e: Entity, ops: list[AlterOp]) -> dict[str, float | None]:
        if not e:
            raise ApiException(errors.INVALID_REQUEST, "Invalid empty client quota entity")
        names = dict(e)
        for kind, name in e:
            if kind not in TYPES:
                raise ApiException(errors.INVALID_REQUEST,
                                   f"Unhandled client quota entity type: {kind}")
            if name == "":
                raise ApiException(errors.INVALID_REQUEST, f"Empty {kind} not supported")
        if IP in names:
            if len(names) > 1:
                raise ApiException(errors.INVALID_REQUEST, "Invalid quota entity combination, "
                                   "IP entity shouldnot be combined with User or ClientId")
            if names[IP] is not None and not _resolvable(names[IP]):
                raise ApiException(errors.INVALID_REQUEST,
                                   f"{names[IP]} is not a valid IP or resolvable host.")
        allowed = IP_KEYS if IP in names else CLIENT_KEYS
        changes: dict[str, float | None] = {}
        for op in ops:
            if op.remove:
                changes[op.key] = None  # removing an absent (or unknown) key is no error
                continue
            if op.key not in allowed:
                raise ApiException(errors.INVALID_REQUEST, f"Invalid configuration key {op.key}")
            value = op.value
            if math.isnan(value) or math.isinf(value):
                raise ApiException(errors.INVALID_REQUEST,
                                   f"Quota {op.key} must be a finite number")
            if value <= 0:
                raise ApiException(errors.INVALID_REQUEST,
                                   f"Quota {op.key} must be greater than 0")
            whole = allowed[op.key]
            if whole is not None:
                if value > _LIMITS[whole]:
                    raise ApiException(errors.INVALID_REQUEST, f"Proposed value for {op.key} "
                                       f"is too large for a{'n' if whole == 'INT' else ''} "
                                       f"{whole}.")
                if abs(value % 1.0) > 1e-6:
                    raise ApiException(errors.INVALID_REQUEST,
                                       f"{op.key} cannot be a fractional value.")
            changes[op.key] = float(value)
        return changes

    def _apply(self, e: Entity, changes: dict[str, float | None]) -> None:
        values = dict(self.values.get(e, {}))
        for key, value in changes.items():
            if value is None:
                values.pop(key, None)
            else:
                values[key] = value
        if values == self.values.get(e, {}):
            return
        if values:
            self.values[e] = values
        else:
            self.values.pop(e, None)
        self.version += 1

    def set(self, e: Entity, **values: float | None) -> None:
        """Set (None: remove) values of an entity without Kafka's checks (the mock's own
        settings and tests)."""
        self._apply(e, values)

    def reset(self) -> None:
        self.values.clear()
        self.version += 1


def _matches(c: FilterComponent, names: dict[str, str | None]) -> bool:
    if c.entity_type not in names:
        return False
    name = names[c.entity_type]
    if c.match_type == EXACT:
        return name == c.match
    if c.match_type == DEFAULT:
        return name is None
    return True  # SPECIFIED: any name, the default included, as Kafka matches it


def _sort_key(e: Entity):
    return [(TYPES.index(kind), name is not None, name or "") for kind, name in e]


def _resolvable(name: str) -> bool:
    """Whether Kafka's ``InetAddress.getByName`` would take it: an address, or a host name
    (the mock resolves no names; it takes what looks like one)."""
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return all(part and all(ch.isalnum() or ch == "-" for ch in part)
                   for part in name.rstrip(".").split("."))
