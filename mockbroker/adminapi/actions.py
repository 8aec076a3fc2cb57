"""Every action a control rule can take, declared once.

An :class:`Action` says what the action does, how it treats the request it picks
(:class:`Kind`), whether it is passive (changes nothing beyond that request), whether
``POST /faults`` may add it, the target parameters it needs and the API it implies.  A
:class:`Target` (``target_broker``, ...) is declared once too, with what it names and the
field of the match it defaults to.

From this table the core validates rules and applies them
(:mod:`mockbroker.core.control.rules`, :mod:`mockbroker.core.control.actions`), the admin API
describes them (:mod:`.views`), and the admin client documents them.  Adding a control action
is an entry here, its applier in the core, and a test.

Standard library only: the stdlib-only admin client imports this module.  The core imports it as
the broker starts, so its entries are named tuples, not dataclasses (whose methods are compiled
as the module loads).
"""

from __future__ import annotations

import enum
from typing import NamedTuple

__all__ = ["ACTIONS", "TARGETS", "Action", "Kind", "Target", "find", "get", "http_names",
           "listing", "names", "passive_names", "target", "target_description", "users"]


class Kind(enum.Enum):
    """How an action treats the request it picks."""

    #: the request is answered otherwise: with an error, late, never, or not at all
    ANSWER = "answer"
    #: the cluster changes first (a broker, a leader, a coordinator, a member, a
    #: transaction), then the request is handled as usual
    CONTROL = "control"
    #: the request's connection or body changes, then the request is handled as usual
    REQUEST = "request"


class Target(NamedTuple):
    """A parameter a control action needs besides the match (a field of ``POST /faults``)."""

    name: str
    #: int or str, as JSON carries it
    type: type
    #: what it is, for the actions that take it
    what: str
    #: what its value names: a broker (one of the cluster's), a topic (a valid topic name), a
    #: partition, a group, a member or a transactional id
    refers_to: str
    minimum: int | None = None
    #: the field of the rule's match it takes when not given (``topic`` for ``target_topic``)
    default_from: str | None = None


class Action(NamedTuple):
    """One action a rule can take."""

    name: str
    #: what it does, in one line
    description: str
    kind: Kind
    #: it changes nothing beyond the request it picks (the group watch need not look around)
    passive: bool
    #: ``POST /faults`` may add it; False for what only a function in-process can do
    http: bool = True
    #: what it needs besides the match, in the order of the fields of ``POST /faults``
    targets: tuple[Target, ...] = ()
    #: the API (Kafka's name) of the only requests it can act on; the match defaults to it
    api: str | None = None

    @property
    def target_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.targets)


_BROKER = Target(name="target_broker", type=int, minimum=0, refers_to="broker",
                 what="the broker to stop or start, to move to, or whose replica lags")
_TOPIC = Target(name="target_topic", type=str, refers_to="topic", what="the topic",
                default_from="topic")
_PARTITION = Target(name="target_partition", type=int, minimum=0, refers_to="partition",
                    what="the partition", default_from="partition")
_GROUP = Target(name="target_group", type=str, refers_to="group", what="the group",
                default_from="group")
_MEMBER = Target(name="target_member", type=str, refers_to="member", what="the member id")
_TRANSACTION = Target(name="target_transaction", type=str, refers_to="transactional id",
                      what="the transactional id")

#: every target parameter, in the order of the fields of ``POST /faults``
TARGETS: tuple[Target, ...] = (_BROKER, _TOPIC, _PARTITION, _GROUP, _MEMBER, _TRANSACTION)

#: every action a rule can take, in the order the admin API lists them
ACTIONS: tuple[Action, ...] = (
    Action(name="error", kind=Kind.ANSWER, passive=True,
           description="answer with a Kafka error instead of handling the request, in the "
                       "API's own response (only the picked partitions fail)"),
    Action(name="delay", kind=Kind.ANSWER, passive=True,
           description="handle the request now, hold its answer back for delay_ms"),
    Action(name="throttle", kind=Kind.ANSWER, passive=True,
           description="handle the request as usual, answer it with throttle_time_ms set to "
                       "throttle_ms and read nothing more from its connection for that long, "
                       "as a broker throttling a client over its quota does"),
    Action(name="drop", kind=Kind.ANSWER, passive=True,
           description="handle the request, never answer it (the answer is lost on the way)"),
    Action(name="disconnect", kind=Kind.ANSWER, passive=True,
           description="close the connection without handling the request"),
    Action(name="stop_broker", kind=Kind.CONTROL, passive=False, targets=(_BROKER,),
           description="stop a broker as if it had died: its leaders and coordinators move "
                       "to live brokers, its connections close"),
    Action(name="start_broker", kind=Kind.CONTROL, passive=False, targets=(_BROKER,),
           description="start a stopped broker again; its replicas rejoin their ISRs and it "
                       "leads again at the next preferred-leader election"),
    Action(name="move_leader", kind=Kind.CONTROL, passive=False,
           targets=(_TOPIC, _PARTITION, _BROKER),
           description="make another replica the partition's leader, with a new leader epoch"),
    Action(name="lag_replica", kind=Kind.CONTROL, passive=False,
           targets=(_TOPIC, _PARTITION, _BROKER),
           description="hold a follower replica back as lagging: it leaves the ISR though its "
                       "broker runs"),
    Action(name="catch_up_replica", kind=Kind.CONTROL, passive=False,
           targets=(_TOPIC, _PARTITION, _BROKER),
           description="let a lagging replica follow again: it rejoins the ISR once caught "
                       "up"),
    Action(name="move_coordinator", kind=Kind.CONTROL, passive=False, targets=(_GROUP, _BROKER),
           description="move a group's coordinator to another broker, which loads the group "
                       "from __consumer_offsets"),
    Action(name="expire_member", kind=Kind.CONTROL, passive=False, targets=(_GROUP, _MEMBER),
           description="remove a member from its group as if its session had timed out"),
    Action(name="expire_share_locks", kind=Kind.CONTROL, passive=False, targets=(_GROUP,),
           description="expire every acquisition lock of a share group's records now: they "
                       "are delivered again (or archived at the delivery limit)"),
    Action(name="abort_transaction", kind=Kind.CONTROL, passive=False, targets=(_TRANSACTION,),
           description="time a transactional id's open transaction out now: its producer is "
                       "fenced and the transaction aborted"),
    Action(name="move_transaction_coordinator", kind=Kind.CONTROL, passive=False,
           targets=(_TRANSACTION, _BROKER),
           description="move a transactional id's coordinator to another broker, which loads "
                       "it from __transaction_state"),
    Action(name="hold_revocation", kind=Kind.REQUEST, passive=False,
           api="ConsumerGroupHeartbeat",
           description="handle a member's ConsumerGroupHeartbeat as if it still owned the "
                       "partitions it is revoking, as a consumer slow to give them up would"),
    Action(name="hold_task_revocation", kind=Kind.REQUEST, passive=False,
           api="StreamsGroupHeartbeat",
           description="handle a streams member's StreamsGroupHeartbeat as if it still owned "
                       "the tasks it is revoking, as a Streams instance slow to give them up "
                       "would"),
    Action(name="hold_acknowledgements", kind=Kind.REQUEST, passive=False,
           description="handle a share member's ShareFetch or ShareAcknowledge as if it "
                       "carried no acknowledgements, as a consumer that never acknowledges "
                       "would: its records stay acquired until their locks expire"),
    Action(name="expire_session", kind=Kind.REQUEST, passive=False,
           description="end the SASL session of the request's connection: its next request "
                       "closes it, and the client authenticates again"),
    Action(name="callback", kind=Kind.ANSWER, passive=True, http=False,
           description="a function given in-process sees the request and answers it, "
                       "closes the connection, or lets it through"),
)

_BY_NAME = {a.name: a for a in ACTIONS}
_TARGET_BY_NAME = {t.name: t for t in TARGETS}


def _check() -> None:
    """The table's own consistency, at import: a mistake in it fails every use at once."""
    if len(_BY_NAME) != len(ACTIONS):
        raise ValueError("an action is declared twice")
    if len(_TARGET_BY_NAME) != len(TARGETS):
        raise ValueError("a target parameter is declared twice")
    for action in ACTIONS:
        for param in action.targets:
            if _TARGET_BY_NAME.get(param.name) is not param:
                raise ValueError(f"{action.name} takes {param.name}, which TARGETS lacks")


_check()


def find(name: str) -> Action | None:
    """The action of that name, or None."""
    return _BY_NAME.get(name)


def get(name: str) -> Action:
    """The action of that name (KeyError if there is none)."""
    return _BY_NAME[name]


def target(name: str) -> Target:
    """The target parameter of that name (KeyError if there is none)."""
    return _TARGET_BY_NAME[name]


def names() -> tuple[str, ...]:
    """Every action's name, in table order (the values ``FaultView.action`` can have)."""
    return tuple(_BY_NAME)


def http_names() -> tuple[str, ...]:
    """The actions ``POST /faults`` may add, in table order."""
    return tuple(a.name for a in ACTIONS if a.http)


def passive_names() -> frozenset[str]:
    """The actions that change nothing beyond the request they pick."""
    return frozenset(a.name for a in ACTIONS if a.passive)


def users(target_name: str) -> tuple[str, ...]:
    """The actions that take a target parameter, in table order."""
    return tuple(a.name for a in ACTIONS if target_name in a.target_names)


def target_description(target_name: str, *, default: bool = True) -> str:
    """A target parameter's description as the admin API shows it: the actions that take it,
    what it is and (``default``) the field of the match it defaults to."""
    param = _TARGET_BY_NAME[target_name]
    text = f"{', '.join(users(target_name))}: {param.what}"
    if default and param.default_from is not None:
        text += f" (default: {param.default_from})"
    return text


def listing() -> list[str]:
    """One line for each action ``POST /faults`` may add: its name, its target parameters and
    what it does (for documentation)."""
    lines = []
    for action in ACTIONS:
        if action.http:
            needs = f" ({', '.join(action.target_names)})" if action.targets else ""
            lines.append(f"{action.name}{needs}: {action.description}")
    return lines
