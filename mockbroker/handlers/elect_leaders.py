"""ElectLeaders (key 43): PREFERRED or UNCLEAN elections of chosen partitions, or of every
partition (a null topic list), by the replication control
(:meth:`~mockbroker.core.controller.replication.ReplicationControl.elect`).

As Kafka's controller answers: one result per partition asked for, in the request's order; with
a null list every topic has an entry, and the partitions that needed no election are left out.
Per partition: UNKNOWN_TOPIC_OR_PARTITION (``No such topic as T`` / ``No such partition as
T-P``), ELECTION_NOT_NEEDED (the preferred replica leads, or an unclean election for a partition
that has a leader), PREFERRED_LEADER_NOT_AVAILABLE or ELIGIBLE_LEADERS_NOT_AVAILABLE when no
replica may lead, else success with a null message.  An election type other than 0 and 1 fails
the request with INVALID_REQUEST.  v0 has no election type: PREFERRED.  Needs ALTER on the
cluster when an authorizer is configured (CLUSTER_AUTHORIZATION_FAILED, at the top and for each
partition asked for).
"""

from __future__ import annotations

from mockbroker.core.control.error_responses import OwnAnswer
from mockbroker.core.controller.change import Election
from mockbroker.core.security.acls import AclOperation, authorizer_of, cluster_denial
from mockbroker.handlers import REGISTRY
from wire import errors, response_class

API_KEY = 43
RESPONSE = response_class(API_KEY)

_ELECTIONS = {0: Election.PREFERRED, 1: Election.UNCLEAN}


def _error_answer(version, request, code):
    """An injected error, where Kafka puts a refusal: at the top (v1+) and on every partition
    asked for."""
    return _failed(request, code, None)


@REGISTRY.handler(API_KEY, errors=OwnAnswer(_error_answer))
def handle(core, ctx, request):
    election_type = request.election_type if ctx.api_version >= 1 else 0
    authorizer = authorizer_of(core)
    if authorizer is not None and cluster_denial(authorizer, ctx, AclOperation.ALTER):
        return _failed(request, errors.CLUSTER_AUTHORIZATION_FAILED,
                       "Request needs ALTER permission on the cluster.")
    election = _ELECTIONS.get(election_type)
    if election is None:
        return _failed(request, errors.INVALID_REQUEST,
                       f"Unknown election type {election_type}")
    replication = core.cluster.replication
    if request.topic_partitions is None:
        elected = replication.elect_all(election)
    else:
        elected = [(asked.topic, [(index, *replication.elect_named(asked.topic, index,
                                                                    election))
                                  for index in asked.partitions])
                   for asked in request.topic_partitions]
    results = [RESPONSE.ReplicaElectionResult(topic=name, partition_result=[
        _result(*outcome) for outcome in outcomes]) for name, outcomes in elected]
    return RESPONSE(throttle_time_ms=0, error_code=errors.NONE, replica_election_results=results)


def _result(index: int, code: int, message: str | None):
    return RESPONSE.PartitionResult(partition_id=index, error_code=code, error_message=message)


def _failed(request, code: int, message: str | None):
    """The whole request refused: the error at the top and on every partition asked for."""
    return RESPONSE(throttle_time_ms=0, error_code=code, replica_election_results=[
        RESPONSE.ReplicaElectionResult(topic=asked.topic, partition_result=[
            _result(index, code, message) for index in asked.partitions])
        for asked in request.topic_partitions or ()])
