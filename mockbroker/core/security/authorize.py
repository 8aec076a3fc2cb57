"""What one request may do: the checks Kafka's ``KafkaApis`` (and ``ControllerApis`` for the
requests a broker forwards) make before serving it, asked of the cluster's authorizer.

A handler takes an :class:`Access` for its request (:func:`access`) and asks it what Kafka's
``AuthHelper`` asks: one action (:meth:`Access.allows`, :meth:`Access.cluster`), a batch of
names (:meth:`Access.allowed`, Kafka's ``filterByAuthorized``), any resource of a type
(:meth:`Access.any_of_type`, ``authorizeByResourceType``) and the KIP-430 operation fields
(:meth:`Access.operations`, :meth:`Access.cluster_operations`).

With no authorizer configured every question is answered yes and :attr:`Access.enforced` is
False: handlers then answer exactly as they do without security.  Where the answers go (per
partition, per topic, per group, at the top, or filtered out) stays each handler's business,
as it is each KafkaApis method's.
"""

from __future__ import annotations

from typing import Iterable

from mockbroker.core.config.values import ResourceType as ConfigResource
from mockbroker.core.security import Principal
from mockbroker.core.security.acls import (
    CLUSTER_NAME, SUPPORTED_OPERATIONS, AclOperation, Authorizer, ResourceType, authorizer_of)
from wire import errors

#: Kafka's ``Errors.message()`` of the authorization failures, which some responses carry
#: (``new ApiError(error)``, ``error.message``, ``prepareOldResponse``)
MESSAGES = {
    errors.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
    errors.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    errors.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "Transactional Id authorization failed.",
}

#: Kafka's ``Topic.isInternal`` names
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


class Access:
    """The authorizer's answers for one request's principal and client host."""

    __slots__ = ("authorizer", "principal", "host")

    def __init__(self, authorizer: Authorizer | None, principal: Principal | str,
                 host: str) -> None:
        self.authorizer = authorizer
        self.principal = principal
        self.host = host

    @property
    def enforced(self) -> bool:
        """Whether an authorizer decides (False: everything is allowed)."""
        return self.authorizer is not None

    def allows(self, operation: AclOperation, resource_type: ResourceType,
               name: str | None) -> bool:
        """Whether the principal may do ``operation`` on the resource named ``name``."""
        if self.authorizer is None:
            return True
        return self.authorizer.authorize(self.principal, self.host, operation, resource_type,
                                         "" if name is None else name)

    def topic(self, operation: AclOperation, name: str | None) -> bool:
        return self.allows(operation, ResourceType.TOPIC, name)

    def group(self, operation: AclOperation, group_id: str | None) -> bool:
        return self.allows(operation, ResourceType.GROUP, group_id)

    def transactional_id(self, operation: AclOperation, transactional_id: str | None) -> bool:
        return self.allows(operation, ResourceType.TRANSACTIONAL_ID, transactional_id)

    def cluster(self, operation: AclOperation) -> bool:
        return self.allows(operation, ResourceType.CLUSTER, CLUSTER_NAME)

    def allowed(self, operation: AclOperation, resource_type: ResourceType,
                names: Iterable[str | None]) -> set[str | None]:
        """The names among ``names`` the principal may do ``operation`` on (each asked once,
        as ``filterByAuthorized`` does)."""
        return {name for name in set(names) if self.allows(operation, resource_type, name)}

    def any_of_type(self, operation: AclOperation, resource_type: ResourceType) -> bool:
        """Whether the principal may do ``operation`` on some resource of the type."""
        if self.authorizer is None:
            return True
        return self.authorizer.authorize_by_resource_type(self.principal, self.host, operation,
                                                          resource_type)

    def operations(self, resource_type: ResourceType, name: str | None) -> int:
        """The KIP-430 bit field of what the principal may do on the resource (every operation
        the type has when nothing is enforced)."""
        if self.authorizer is None:
            return sum(1 << op for op in SUPPORTED_OPERATIONS[ResourceType.of(resource_type)])
        return self.authorizer.authorized_operations(self.principal, self.host, resource_type,
                                                     "" if name is None else name)

    def config_denial(self, operation: AclOperation, config_type: int,
                      name: str | None, *, broker_logger: bool = True) -> int | None:
        """The error Kafka refuses DESCRIBE_CONFIGS or ALTER_CONFIGS on a config resource with
        (a broker's, a client-metrics subscription's: CLUSTER_AUTHORIZATION_FAILED; a topic's:
        TOPIC_, a group's: GROUP_AUTHORIZATION_FAILED), or None when allowed.  A type Kafka
        does not authorize so (UNKNOWN, or BROKER_LOGGER when not ``broker_logger``) is left
        to the request's own checks (None)."""
        cluster_types = (ConfigResource.BROKER, ConfigResource.CLIENT_METRICS) + \
            ((ConfigResource.BROKER_LOGGER,) if broker_logger else ())
        if config_type in cluster_types:
            return None if self.cluster(operation) else errors.CLUSTER_AUTHORIZATION_FAILED
        if config_type == ConfigResource.TOPIC:
            return None if self.topic(operation, name) else errors.TOPIC_AUTHORIZATION_FAILED
        if config_type == ConfigResource.GROUP:
            return None if self.group(operation, name) else errors.GROUP_AUTHORIZATION_FAILED
        return None

    def cluster_operations(self) -> int:
        """A cluster's KIP-430 field as Metadata and DescribeCluster fill it: 0 for a principal
        that may not DESCRIBE the cluster."""
        if not self.cluster(AclOperation.DESCRIBE):
            return 0
        return self.operations(ResourceType.CLUSTER, CLUSTER_NAME)


#: the :class:`Access` of every request while no authorizer is configured: nothing then asks
#: who sent it, so one serves them all
_OPEN = Access(None, "", "")


def access(core, ctx) -> Access:
    """The :class:`Access` of the request ``ctx`` describes, on ``core``."""
    authorizer = authorizer_of(core)
    if authorizer is None:
        return _OPEN
    return Access(authorizer, ctx.principal, ctx.client_host)
