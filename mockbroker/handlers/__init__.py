"""One module per API.  Each registers the versions it serves on :data:`REGISTRY`, from which
ApiVersions is built, so a version without a handler can never be advertised.

A handler is ``handle(core, ctx, request) -> response | Deferred | Close | None``: it translates
between wire messages and calls on :class:`mockbroker.core.dispatch.Core`; the logic lives in
the core.  The core is given this registry (:func:`new_core`); it never imports the handlers.
"""

from mockbroker.handlers.registry import ApiRegistry

REGISTRY = ApiRegistry()

# Importing a handler module registers it.
from mockbroker.handlers import (  # noqa: E402,F401
    add_offsets_to_txn,
    add_partitions_to_txn,
    alter_user_scram_credentials,
    alter_configs,
    consumer_group_describe,
    consumer_group_heartbeat,
    api_versions,
    create_acls,
    create_partitions,
    create_topics,
    delete_acls,
    delete_groups,
    delete_records,
    delete_topics,
    describe_acls,
    describe_cluster,
    describe_configs,
    describe_groups,
    describe_log_dirs,
    describe_producers,
    describe_topic_partitions,
    describe_transactions,
    describe_user_scram_credentials,
    end_txn,
    fetch,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    list_transactions,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    sasl_authenticate,
    sasl_handshake,
    sync_group,
    txn_offset_commit,
    write_txn_markers,
)


def new_core(brokers, settings=None, clock=None, security=None, events=None):
    """A :class:`~mockbroker.core.dispatch.Core` that serves every API of this package."""
    from mockbroker.core.dispatch import Core

    return Core(brokers, settings, clock, registry=REGISTRY, security=security, events=events)
