"""ACLs and the decisions taken from them, as Kafka 4's ``StandardAuthorizer`` takes them.

Sans-IO and free of the wire codec: the handlers of CreateAcls, DescribeAcls and DeleteAcls
translate their messages into the types here, and any handler that must authorize an action
asks :meth:`Authorizer.authorize`.

* :class:`AclBinding` — one ACL: a resource pattern (type, name, LITERAL or PREFIXED) and an
  entry (principal, host, operation, ALLOW or DENY).
* :class:`AclBindingFilter` — what DescribeAcls and DeleteAcls select ACLs with; ANY matches
  every value of a field, and the MATCH pattern type selects the ACLs that would apply to the
  resource it names (the literal name, the ``*`` wildcard and every prefix of it).
* :class:`AclStore` — the cluster's ACLs.  Creating and deleting check what a Kafka 4 cluster
  checks (the broker's ACL request handling plus the controller's ``AclControlManager``) and
  answer with the same error codes and messages; creating an ACL twice is not an error.
* :class:`Authorizer` — super users, the store, and the rule for a resource no ACL names
  (``allow.everyone.if.no.acl.found``).  A DENY that applies wins over any ALLOW; ALL covers
  every operation; an ALLOW of READ, WRITE, DELETE or ALTER also allows DESCRIBE, and an ALLOW
  of ALTER_CONFIGS also allows DESCRIBE_CONFIGS (a DENY implies nothing beyond itself).  It
  also answers whether an operation is allowed on some resource of a type
  (``authorizeByResourceType``, for an idempotent producer's WRITE on any topic).
* :func:`authorizer_of` and :func:`cluster_denial` — what the ACL handlers share: the core's
  authorizer (None when none is configured) and Kafka's refusal of a client that lacks an
  operation on the cluster.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Iterable, Iterator, Sequence

from msgspec import Struct

from mockbroker.core.deferred import Close
from mockbroker.core.security import Principal
from wire import errors


class _Coded(IntEnum):
    """An enum of Kafka's byte codes; a code Kafka does not define reads as UNKNOWN (0)."""

    @classmethod
    def of(cls, code: int):
        try:
            return cls(code)
        except ValueError:
            return cls(0)


class ResourceType(_Coded):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(_Coded):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(_Coded):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(_Coded):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


#: the one name a CLUSTER resource has
CLUSTER_NAME = "kafka-cluster"
#: a LITERAL resource name that stands for every name of its type
WILDCARD_RESOURCE = "*"
#: the ACL principal that stands for every principal
WILDCARD_PRINCIPAL = "User:*"
#: the ACL host that stands for every host
WILDCARD_HOST = "*"
#: the most ACL records one request may write (Kafka's controller batch limit)
MAX_RECORDS_PER_USER_OP = 10_000

_o = AclOperation
#: the operations each concrete resource type has (what KIP-430 authorized-operations fields
#: range over)
SUPPORTED_OPERATIONS: dict[ResourceType, frozenset[AclOperation]] = {
    ResourceType.TOPIC: frozenset({_o.READ, _o.WRITE, _o.CREATE, _o.DESCRIBE, _o.DELETE,
                                   _o.ALTER, _o.DESCRIBE_CONFIGS, _o.ALTER_CONFIGS}),
    ResourceType.GROUP: frozenset({_o.READ, _o.DESCRIBE, _o.DELETE, _o.DESCRIBE_CONFIGS,
                                   _o.ALTER_CONFIGS}),
    ResourceType.CLUSTER: frozenset({_o.CREATE, _o.CLUSTER_ACTION, _o.DESCRIBE_CONFIGS,
                                     _o.ALTER_CONFIGS, _o.IDEMPOTENT_WRITE, _o.ALTER,
                                     _o.DESCRIBE}),
    ResourceType.TRANSACTIONAL_ID: frozenset({_o.DESCRIBE, _o.WRITE, _o.TWO_PHASE_COMMIT}),
    ResourceType.DELEGATION_TOKEN: frozenset({_o.DESCRIBE}),
    ResourceType.USER: frozenset({_o.CREATE_TOKENS, _o.DESCRIBE_TOKENS}),
}

#: what an ALLOW of an operation also allows, besides itself
_IMPLIED_BY_ALLOW: dict[AclOperation, frozenset[AclOperation]] = {
    _o.DESCRIBE: frozenset({_o.DESCRIBE, _o.READ, _o.WRITE, _o.DELETE, _o.ALTER}),
    _o.DESCRIBE_CONFIGS: frozenset({_o.DESCRIBE_CONFIGS, _o.ALTER_CONFIGS}),
}
del _o


# -- bindings and filters ----------------------------------------------------------------------

def _as_enums(binding) -> None:
    """Turn a binding's or filter's codes (ints off the wire) into the enums, in place: through
    each field's slot descriptor, since the struct is frozen to attribute assignment."""
    cls = type(binding)
    for name, enum in (("resource_type", ResourceType), ("pattern_type", PatternType),
                       ("operation", AclOperation), ("permission_type", AclPermissionType)):
        getattr(cls, name).__set__(binding, enum.of(getattr(binding, name)))


class AclBinding(Struct, frozen=True):
    """One ACL.  Integer codes are read into the enums (an undefined code as UNKNOWN)."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def __post_init__(self) -> None:
        _as_enums(self)

    def __str__(self) -> str:
        return (f"({self.resource_type.name}:{self.pattern_type.name}:{self.resource_name}, "
                f"{self.principal} from {self.host}: {self.permission_type.name} "
                f"{self.operation.name})")

    def applies_to(self, resource_type: ResourceType, name: str) -> bool:
        """Whether this ACL's pattern covers the resource ``resource_type:name``."""
        if self.resource_type != resource_type:
            return False
        if self.pattern_type == PatternType.LITERAL:
            return self.resource_name in (name, WILDCARD_RESOURCE)
        if self.pattern_type == PatternType.PREFIXED:
            return name.startswith(self.resource_name)
        return False

    def malformed(self) -> str | None:
        """Why Kafka could not even build this binding from a creation (a filter's ANY or MATCH
        where a concrete value belongs), or None.  Kafka fails the whole request on it."""
        if self.resource_type == ResourceType.ANY:
            return "resourceType must not be ANY"
        if self.pattern_type in (PatternType.ANY, PatternType.MATCH):
            return f"patternType must not be {self.pattern_type.name}"
        if self.operation == AclOperation.ANY:
            return "operation must not be ANY"
        if self.permission_type == AclPermissionType.ANY:
            return "permissionType must not be ANY"
        return None


class AclBindingFilter(Struct, frozen=True):
    """A selection of ACLs.  None (names, principal, host) and ANY (codes) match anything;
    everything else must be equal, except the MATCH pattern type (see :meth:`matches`)."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    def __post_init__(self) -> None:
        _as_enums(self)

    def matches(self, acl: AclBinding) -> bool:
        return self._matches_pattern(acl) and self._matches_entry(acl)

    def _matches_pattern(self, acl: AclBinding) -> bool:
        if self.resource_type != ResourceType.ANY and self.resource_type != acl.resource_type:
            return False
        wanted = self.pattern_type
        if wanted not in (PatternType.ANY, PatternType.MATCH) and wanted != acl.pattern_type:
            return False
        if self.resource_name is None:
            return True
        if wanted in (PatternType.ANY, acl.pattern_type):
            return self.resource_name == acl.resource_name
        # MATCH: the ACLs that would apply to a resource of this name
        if acl.pattern_type == PatternType.LITERAL:
            return acl.resource_name in (self.resource_name, WILDCARD_RESOURCE)
        return self.resource_name.startswith(acl.resource_name)

    def _matches_entry(self, acl: AclBinding) -> bool:
        if self.principal is not None and self.principal != acl.principal:
            return False
        if self.host is not None and self.host != acl.host:
            return False
        if self.operation != AclOperation.ANY and self.operation != acl.operation:
            return False
        return self.permission_type in (AclPermissionType.ANY, acl.permission_type)

    def invalid(self) -> str | None:
        """Why a deletion refuses this filter (an UNKNOWN code in it), or None."""
        if self.resource_type == ResourceType.UNKNOWN or \
                self.pattern_type == PatternType.UNKNOWN:
            return "Unknown patternFilter."
        if self.operation == AclOperation.UNKNOWN or \
                self.permission_type == AclPermissionType.UNKNOWN:
            return "Unknown entryFilter."
        return None


#: the filter that selects every ACL
ANY_ACL = AclBindingFilter()


# -- results ----------------------------------------------------------------------------------

class AclResult(Struct, frozen=True):
    """The outcome of one creation: NONE, or an error code with Kafka's message (None where
    Kafka gives none)."""

    error_code: int = errors.NONE
    error_message: str | None = None

    @property
    def ok(self) -> bool:
        return self.error_code == errors.NONE


class AclDeleteResult(Struct, frozen=True):
    """The outcome of one deletion filter: the ACLs it deleted, or an error and none."""

    error_code: int = errors.NONE
    error_message: str | None = None
    deleted: tuple[AclBinding, ...] = ()


CREATED = AclResult()


# -- the store --------------------------------------------------------------------------------

class AclStore:
    """The cluster's ACLs, in the order they were created."""

    def __init__(self, max_records_per_op: int = MAX_RECORDS_PER_USER_OP) -> None:
        self._acls: dict[AclBinding, None] = {}
        self.max_records_per_op = max_records_per_op

    def __len__(self) -> int:
        return len(self._acls)

    def __iter__(self) -> Iterator[AclBinding]:
        return iter(list(self._acls))

    def __contains__(self, acl: object) -> bool:
        return acl in self._acls

    def create(self, acls: Sequence[AclBinding]) -> list[AclResult]:
        """Create ``acls`` (those already there are left as they are): one result per binding,
        in order.  Kafka's checks, in its order:

        * a binding with ANY or MATCH where a concrete value belongs fails the whole request,
          every binding with UNKNOWN_SERVER_ERROR and no message;
        * the broker refuses a CLUSTER resource not named ``kafka-cluster`` and an empty name;
        * the controller refuses UNKNOWN codes and a principal with no ``:``;
        * more than :attr:`max_records_per_op` new ACLs fail every binding that reached the
          controller with POLICY_VIOLATION, and nothing is created.
        """
        if any(acl.malformed() for acl in acls):
            return [AclResult(errors.UNKNOWN_SERVER_ERROR)] * len(acls)
        results: list[AclResult | None] = []
        for acl in acls:
            message = _refused_by_broker(acl) or _refused_by_controller(acl)
            results.append(AclResult(errors.INVALID_REQUEST, message) if message else None)
        new = {acl: None for acl, result in zip(acls, results)
               if result is None and acl not in self._acls}
        if len(new) > self.max_records_per_op:
            too_big = AclResult(errors.POLICY_VIOLATION,
                                "Unable to perform excessively large batch operation.")
            return [result if _refused_by_broker(acl) else too_big
                    for acl, result in zip(acls, results)]
        self._acls.update(new)
        return [CREATED if result is None else result for result in results]

    def describe(self, acl_filter: AclBindingFilter = ANY_ACL) -> list[AclBinding]:
        """The ACLs ``acl_filter`` selects (a filter with an UNKNOWN code selects none)."""
        return [acl for acl in self._acls if acl_filter.matches(acl)]

    def delete(self, filters: Sequence[AclBindingFilter]) -> list[AclDeleteResult]:
        """Delete what each filter selects: one result per filter, in order, each listing the
        ACLs it selected.  Every filter sees the ACLs as they were before the request, so two
        filters that select the same ACL both report it.  A filter with an UNKNOWN code fails
        alone (INVALID_REQUEST); deleting more than :attr:`max_records_per_op` ACLs fails every
        filter (INVALID_REQUEST) and deletes nothing."""
        results: list[AclDeleteResult] = []
        doomed: set[AclBinding] = set()
        for acl_filter in filters:
            message = acl_filter.invalid()
            if message is not None:
                results.append(AclDeleteResult(errors.INVALID_REQUEST, message))
                continue
            deleted = []
            for acl in self._acls:
                if acl_filter.matches(acl):
                    if len(doomed) >= self.max_records_per_op:
                        refused = AclDeleteResult(
                            errors.INVALID_REQUEST,
                            f"Cannot remove more than {self.max_records_per_op} acls in a "
                            "single delete operation.")
                        return [refused] * len(filters)
                    deleted.append(acl)
                    doomed.add(acl)
            results.append(AclDeleteResult(deleted=tuple(deleted)))
        for acl in doomed:
            del self._acls[acl]
        return results

    def applicable(self, resource_type: ResourceType, name: str) -> list[AclBinding]:
        """The ACLs whose pattern covers the resource ``resource_type:name``, whoever they
        are for."""
        return [acl for acl in self._acls if acl.applies_to(resource_type, name)]


def _refused_by_broker(acl: AclBinding) -> str | None:
    """What the broker's CreateAcls handling refuses before passing ACLs to the controller."""
    if acl.resource_type == ResourceType.CLUSTER and acl.resource_name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not acl.resource_name:
        return "Invalid empty resource name"
    return None


def _refused_by_controller(acl: AclBinding) -> str | None:
    """What the controller refuses in a new ACL."""
    if acl.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        return f"Invalid resourceType {acl.resource_type.name}"
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"Invalid patternType {acl.pattern_type.name}"
    if acl.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        return f"Invalid operation {acl.operation.name}"
    if acl.permission_type not in (AclPermissionType.DENY, AclPermissionType.ALLOW):
        return f"Invalid permissionType {acl.permission_type.name}"
    if not acl.resource_name:
        return "Resource name should not be empty"
    if ":" not in acl.principal:
        return (f"Could not parse principal from `{acl.principal}` (no colon is present "
                "separating the principal type from the principal name)")
    return None


# -- the authorizer ---------------------------------------------------------------------------

def _principal_text(principal: Principal | str) -> str:
    return principal if isinstance(principal, str) else str(principal)


def _principal_key(text: str) -> tuple[str, str]:
    kind, _, name = text.partition(":")
    return kind, name


_WILDCARD_KEY = _principal_key(WILDCARD_PRINCIPAL)


class Authorizer:
    """Decides what a principal may do, from the ACLs in :attr:`acls`.

    ``super_users`` (``Principal`` or ``"User:alice"``) may do anything.  For a resource that no
    ACL's pattern covers, ``allow_everyone_if_no_acl_found`` decides (Kafka's default: deny);
    once any ACL covers it, only a matching ALLOW (and no matching DENY) allows.
    """

    def __init__(self, super_users: Iterable[Principal | str] = (),
                 allow_everyone_if_no_acl_found: bool = False,
                 acls: AclStore | None = None) -> None:
        self.super_users = frozenset(_principal_text(p) for p in super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        self.acls = AclStore() if acls is None else acls

    def is_super_user(self, principal: Principal | str) -> bool:
        return _principal_text(principal) in self.super_users

    def authorize(self, principal: Principal | str, host: str, operation: AclOperation,
                  resource_type: ResourceType, resource_name: str) -> bool:
        """Whether ``principal``, connected from ``host``, may do ``operation`` on the
        resource ``resource_type:resource_name`` (a literal name)."""
        if self.is_super_user(principal):
            return True
        operation = AclOperation.of(operation)
        resource_type = ResourceType.of(resource_type)
        who = {_principal_key(_principal_text(principal)), _WILDCARD_KEY}
        covered = allowed = False
        for acl in self.acls.applicable(resource_type, resource_name):
            covered = True
            verdict = _verdict(acl, who, host, operation)
            if verdict is AclPermissionType.DENY:
                return False
            allowed = allowed or verdict is AclPermissionType.ALLOW
        return allowed if covered else self.allow_everyone_if_no_acl_found

    def authorize_by_resource_type(self, principal: Principal | str, host: str,
                                   operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        """Whether ``principal`` may do ``operation`` on at least one resource of the type, as
        Kafka's ``Authorizer.authorizeByResourceType`` decides (what an idempotent producer's
        InitProducerId asks of WRITE on topics).

        Allowed at once when a made-up name would be (super users, the no-ACL default, a
        wildcard ALLOW); otherwise some ALLOW of the operation itself (or ALL) for the principal
        (or ``User:*``) and host must name a resource that no DENY covers as a whole: a literal
        DENY of the same name, or a prefixed DENY of a prefix of the allowed name; a wildcard
        DENY refuses everything.  Implied operations play no part here."""
        operation = AclOperation.of(operation)
        resource_type = ResourceType.of(resource_type)
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True
        who = {_principal_key(_principal_text(principal)), _WILDCARD_KEY}
        denied: dict[PatternType, set[str]] = {PatternType.LITERAL: set(),
                                               PatternType.PREFIXED: set()}
        allowed: dict[PatternType, set[str]] = {PatternType.LITERAL: set(),
                                                PatternType.PREFIXED: set()}
        wildcard_allow = False
        for acl in self.acls:
            if acl.resource_type != resource_type:
                continue
            if acl.host not in (host, WILDCARD_HOST) or _principal_key(acl.principal) not in who:
                continue
            if acl.operation not in (operation, AclOperation.ALL):
                continue
            if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
                continue
            literal_wildcard = acl.pattern_type == PatternType.LITERAL and \
                acl.resource_name == WILDCARD_RESOURCE
            if acl.permission_type == AclPermissionType.DENY:
                if literal_wildcard:
                    return False
                denied[acl.pattern_type].add(acl.resource_name)
            elif acl.permission_type == AclPermissionType.ALLOW:
                if literal_wildcard:
                    wildcard_allow = True
                else:
                    allowed[acl.pattern_type].add(acl.resource_name)
        if wildcard_allow:
            return True
        for pattern_type, names in allowed.items():
            for name in names:
                if pattern_type == PatternType.LITERAL and name in denied[PatternType.LITERAL]:
                    continue
                if not any(name[:end] in denied[PatternType.PREFIXED]
                           for end in range(1, len(name) + 1)):
                    return True
        return False

    def authorized_operations(self, principal: Principal | str, host: str,
                              resource_type: ResourceType, resource_name: str) -> int:
        """The KIP-430 bit field of the operations ``principal`` may do on the resource: bit
        ``code`` set for each allowed operation the resource type has."""
        supported = SUPPORTED_OPERATIONS.get(ResourceType.of(resource_type))
        if supported is None:
            raise ValueError(f"{ResourceType.of(resource_type).name} is not a concrete "
                             "resource type")
        field = 0
        for operation in supported:
            if self.authorize(principal, host, operation, resource_type, resource_name):
                field |= 1 << operation
        return field


def _verdict(acl: AclBinding, who: set[tuple[str, str]], host: str,
             operation: AclOperation) -> AclPermissionType | None:
    """What ``acl`` (whose pattern covers the resource) says about the action: ALLOW, DENY,
    or None when it is for someone, somewhere or something else."""
    if _principal_key(acl.principal) not in who:
        return None
    if acl.host != WILDCARD_HOST and acl.host != host:
        return None
    if acl.operation != AclOperation.ALL:
        if acl.permission_type == AclPermissionType.ALLOW:
            if acl.operation not in _IMPLIED_BY_ALLOW.get(operation, (operation,)):
                return None
        elif acl.operation != operation:
            return None
    return acl.permission_type


# -- for the handlers -------------------------------------------------------------------------

def authorizer_of(core) -> Authorizer | None:
    """The cluster's authorizer, or None when none is configured (or the core has no security
    state at all)."""
    return getattr(getattr(core, "security", None), "authorizer", None)


def cluster_denial(authorizer: Authorizer, ctx, operation: AclOperation) -> str | None:
    """None when the principal of the request ``ctx`` describes may do ``operation`` on the
    cluster; otherwise the message of Kafka's CLUSTER_AUTHORIZATION_FAILED, which names the
    request (Kafka prints its internal request object there: this is a likeness) and the
    operation it needed."""
    if authorizer.authorize(ctx.principal, ctx.client_host, operation, ResourceType.CLUSTER,
                            CLUSTER_NAME):
        return None
    return (f"Request Request(connectionId={ctx.connection_id}, principal={ctx.principal}, "
            f"clientAddress=/{ctx.client_host}, listenerName=ListenerName({ctx.listener})) "
            f"needs {operation.name} permission.")


def acl_api_gate(core, ctx, entries, code_fields: tuple[str, ...], operation: AclOperation,
                 disabled: str, api: str):
    """What the ACL APIs check before their entries, in Kafka's order: (the authorizer, None)
    to go on, or (None, what to answer instead): a :class:`Close` when an entry holds an
    UNKNOWN (0) code (Kafka's request parsing refuses it and the connection closes), else
    (error code, message) for SECURITY_DISABLED (no authorizer; ``disabled`` is that API's
    message) or CLUSTER_AUTHORIZATION_FAILED (no ``operation`` on the cluster)."""
    if any(getattr(entry, name) == 0 for entry in entries for name in code_fields):
        return None, Close(f"{api}: an UNKNOWN code, which Kafka cannot parse")
    authorizer = authorizer_of(core)
    if authorizer is None:
        return None, (errors.SECURITY_DISABLED, disabled)
    denial = cluster_denial(authorizer, ctx, operation)
    if denial is not None:
        return None, (errors.CLUSTER_AUTHORIZATION_FAILED, denial)
    return authorizer, None
