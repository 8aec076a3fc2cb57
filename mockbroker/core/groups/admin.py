"""Group administration: ListGroups, DeleteGroups and OffsetDelete as a coordinator answers
them, and the knobs the admin API turns (force a rebalance, expire a member, move a
coordinator).  Shared by every group type; what is type-specific the group says itself (who may
lose which offsets), or its type through the table of group types (how ListGroups lists it,
and what a forced rebalance or an expired member is to its protocol).  The describe requests
ask the coordinator (``describe_as``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.core.errors import ApiException
from mockbroker.core.groups.classic_api import CONSUMER_PROTOCOL_TYPE
from wire import errors

if TYPE_CHECKING:
    from mockbroker.core.groups import Listed
    from mockbroker.core.groups.coordinator import GroupCoordinator


class GroupAdmin:
    def __init__(self, coordinator: "GroupCoordinator"):
        self.coordinator = coordinator

    def describe_group(self, broker_id: int, group_id: str):
        """The group, of whatever type, or None when this coordinator has no such group;
        ApiException when this broker cannot answer for the group.  (The describe requests
        ask for a group of their own type: ``coordinator.describe_as``.)"""
        group = self.coordinator.shard_for(group_id, broker_id).groups.get(group_id)
        return None if group is None or group.is_dead else group

    def list_groups(self, broker_id: int) -> list[Listed]:
        """Every group of every shard ``broker_id`` leads, as Kafka 4 reads all its shards, each
        as its type lists it.

        A shard still loading fails the whole listing with COORDINATOR_LOAD_IN_PROGRESS, as
        one failed shard read fails Kafka's combined answer."""
        types = self.coordinator.types
        return [types.of(group).listed(group) for shard in self.coordinator.led_shards(broker_id)
                for group in shard.groups.values() if not group.is_dead]

    def delete_groups(self, broker_id: int, group_ids: list[str]) -> dict[str, int]:
        """Delete each group that has no members: its offsets and its metadata get tombstones.

        Per group: GROUP_ID_NOT_FOUND for a group this coordinator does not have,
        NON_EMPTY_GROUP while members are in it, the coordinator error when this broker is not
        the group's coordinator (Kafka's ClassicGroup.validateDeleteGroup)."""
        results: dict[str, int] = {}
        for group_id in group_ids:
            try:
                shard = self.coordinator.shard_for(group_id, broker_id)
            except ApiException as exc:
                results[group_id] = exc.error_code
                continue
            group = shard.groups.get(group_id)
            if group is None or group.is_dead:
                results[group_id] = errors.GROUP_ID_NOT_FOUND
            elif not group.is_empty:
                results[group_id] = errors.NON_EMPTY_GROUP
            else:
                self.coordinator.delete_group(shard, group)
                results[group_id] = errors.NONE
        return results

    def delete_offsets(self, broker_id: int, group_id: str,
                       partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """OffsetDelete on the coordinator: an error code per partition, tombstones written for
        the deleted offsets that existed.  Group-level refusals raise ApiException.

        A group with members may lose the offsets of topics it does not consume, but only if
        it speaks the consumer protocol (whose subscriptions the coordinator can read); its
        subscribed topics answer GROUP_SUBSCRIBED_TO_TOPIC (Kafka's
        ClassicGroup.validateOffsetDelete and OffsetMetadataManager.deleteOffsets)."""
        group = self.coordinator.shard_for(group_id, broker_id).groups.get(group_id)
        if group is None or group.is_dead:
            raise ApiException(errors.GROUP_ID_NOT_FOUND)
        if not group.is_empty and group.protocol_type != CONSUMER_PROTOCOL_TYPE:
            raise ApiException(errors.NON_EMPTY_GROUP)
        subscribed = group.subscribed_topics()
        results: dict[tuple[str, int], int] = {}
        doomed: list[tuple[str, int]] = []
        for topic, index in partitions:
            if group.consumes(topic, subscribed):
                results[(topic, index)] = errors.GROUP_SUBSCRIBED_TO_TOPIC
                continue
            results[(topic, index)] = errors.NONE
            if (topic, index) in group.offsets and (topic, index) not in doomed:
                doomed.append((topic, index))
        if doomed:
            self.coordinator.offsets.delete(group, doomed)
        return results

    # -- knobs -----------------------------------------------------------------------------------

    def _group(self, group_id: str):
        group = self.coordinator.find_group(group_id)
        if group is None:
            raise ApiException(errors.GROUP_ID_NOT_FOUND, f"unknown group {group_id!r}")
        return group

    def force_rebalance(self, group_id: str) -> None:
        """Start a rebalance as if membership had changed (INVALID_REQUEST for a type whose
        members rebalance by themselves)."""
        group = self._group(group_id)
        self.coordinator.protocol(group.type).force_rebalance(group)

    def expire_member(self, group_id: str, member_id: str) -> None:
        """Remove a member as if its session had timed out now."""
        group = self._group(group_id)
        self.coordinator.protocol(group.type).expire_member(group, member_id)

    def move_coordinator(self, group_id: str, node_id: int) -> None:
        """Move the leader of the group's ``__consumer_offsets`` partition to ``node_id``, as a
        reassignment would: the new coordinator loads the group (with every other group of that
        partition) from the partition's records."""
        self._group(group_id)
        self.coordinator.cluster.move_leader(
            self.coordinator.placement.partition(group_id), node_id)
