"""The table of group types: the one place that names every type, and what serves a request of
one type's protocol that reaches a group of another.

Each type is a package beside the others whose ``grouptype`` module declares, once, what
differs between types (a :class:`~mockbroker.core.groups.GroupType`: its name, its protocol,
its records and their tombstones, its snapshot for the group watch, its views for the admin
API, its ListGroups entry, its rebalancing states), and one entry in :data:`TABLE`.  What joins
two types (mixed groups, migration) registers the requests it serves between them, in the
packages :data:`BETWEEN` loads.  A new type is one package and one
line of :data:`TABLE`, as KIP-932's share groups and KIP-1071's streams groups are.

The coordinator routes by this table (one lookup per request: :meth:`GroupTypes.route`); the
handlers, the admin API and the group watch ask the coordinator, and none of them branches on a
type's name.

Imports every type's package and those :data:`BETWEEN` names only inside the functions that
load them, so nothing of a type loads before a group needs it (``tests/test_import_cost.py``).
Imported by the coordinator, and by the observers for the type names and rebalancing states.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from mockbroker.core.errors import ApiException
from wire import errors

if TYPE_CHECKING:
    from mockbroker.core.groups import GroupProtocol, GroupType


def _classic() -> "GroupType":
    from mockbroker.core.groups.classic.grouptype import ClassicType

    return ClassicType()


def _consumer() -> "GroupType":
    from mockbroker.core.groups.consumer.grouptype import ConsumerType

    return ConsumerType()


def _share() -> "GroupType":
    from mockbroker.core.groups.share.grouptype import ShareType

    return ShareType()


def _streams() -> "GroupType":
    from mockbroker.core.groups.streams.grouptype import StreamsType

    return StreamsType()


#: Kafka's name of each group type -> what loads its declaration.  Replay rebuilds each type's
#: groups in this order, and should two types' records both hold a group id the later one wins
#: (they cannot: a conversion writes tombstones for the old type's records).
TABLE: dict[str, Callable[[], "GroupType"]] = {
    "classic": _classic,
    "consumer": _consumer,
    "share": _share,
    "streams": _streams,
}

#: A group known only by its committed offsets (a simple consumer's, an admin tool's) is a group
#: of this type, as Kafka holds it; its protocol validates an OffsetCommit to no group.
BARE = "classic"


def _mixed() -> dict:
    from mockbroker.core.groups.mixed import SERVES

    return SERVES


#: What loads the registrations of each package that serves requests between types:
#: {(the type whose protocol a request belongs to, the type of the group it reaches): the class
#: of what serves it there, built with the coordinator}.
BETWEEN: tuple[Callable[[], dict], ...] = (_mixed,)

_declared: dict[str, "GroupType"] = {}


def names() -> tuple[str, ...]:
    """Every type's name, in the table's order."""
    return tuple(TABLE)


def declared(name: str) -> "GroupType":
    """Type ``name``'s declaration, loaded on first use (stateless: one serves every
    coordinator); KeyError for a name the table does not have."""
    found = _declared.get(name)
    if found is None:
        found = _declared[name] = TABLE[name]()
    return found


def rebalancing_states() -> dict[str, frozenset[str]]:
    """Type name -> the states in which a rebalance of one of its groups is under way."""
    return {name: declared(name).rebalancing for name in TABLE}


class GroupTypes:
    """The table as one coordinator uses it: each type's protocol, built on first use, and what
    serves a request that reaches a group of another type."""

    def __init__(self, coordinator):
        self._coordinator = coordinator
        self._protocols: dict[str, "GroupProtocol"] = {}
        #: (protocol's type, group's type) -> the class that serves it; loaded on first need
        self._between: dict[tuple[str, str], type] | None = None
        self._servers: dict[tuple[str, str], object] = {}

    @staticmethod
    def of(group) -> "GroupType":
        """The declaration of ``group``'s type."""
        return declared(group.type)

    def protocol(self, name: str) -> "GroupProtocol":
        """Type ``name``'s protocol for this coordinator, built on first use."""
        found = self._protocols.get(name)
        if found is None:
            found = self._protocols[name] = declared(name).protocol(self._coordinator)
        return found

    def _registered(self) -> dict[tuple[str, str], type]:
        if self._between is None:
            self._between = {}
            for load in BETWEEN:
                self._between.update(load())
        return self._between

    def _server(self, pair: tuple[str, str]):
        found = self._servers.get(pair)
        if found is None:
            found = self._servers[pair] = self._registered()[pair](self._coordinator)
        return found

    def route(self, protocol: str, group):
        """What serves a request of ``protocol``'s API (the name of the type whose API it is)
        that reaches ``group``: that type's protocol when there is no group or one of its own
        type, else what the table registers for the pair.  When nothing does, ApiException
        GROUP_ID_NOT_FOUND in Kafka's words for a group of the wrong type."""
        if group is None or group.type == protocol:
            return self.protocol(protocol)
        pair = (protocol, group.type)
        if pair not in self._registered():
            raise ApiException(errors.GROUP_ID_NOT_FOUND,
                               f"Group {group.group_id} is not a {protocol} group.")
        return self._server(pair)

    def between(self, group_type: str) -> list:
        """What serves other protocols' requests to groups of ``group_type`` (built now)."""
        return [self._server(pair) for pair in self._registered() if pair[1] == group_type]
