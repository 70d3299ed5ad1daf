"""Topics, partitions, leaders and ISRs (Kafka 4.3's ``ReplicationControlManager``):
each operation reads the controller's latest state and returns the records to write and
the answer to give (a :class:`~kafkacore.controller.kraft.result.ControllerResult`).

* CreateTopics (replicas placed by :mod:`kafkacore.placement` over the active brokers;
  explicit assignments checked; configs validated with the topic config definitions),
  DeleteTopics, CreatePartitions;
* AlterPartition from a partition leader (Kafka's validation order and error codes,
  INELIGIBLE_REPLICA for fenced, shutting-down, unknown or re-registered ISR members);
* ElectLeaders (PREFERRED, UNCLEAN), AlterPartitionReassignments (KIP-455: add the
  target replicas, wait for them in the ISR, drop the removed ones), their cancellation,
  ListPartitionReassignments;
* broker heartbeats: fencing, unfencing, controlled shutdown and their partition changes;
  session expiry; unregistration; the unclean shutdown of a broker that re-registers
  (KIP-966: its replicas leave the ISR and the ELR);
* AssignReplicasToDirs: a replica's log directory.

Every partition change goes through :class:`PartitionChangeBuilder`, with ELR as the
``eligible.leader.replicas.version`` feature says and the topic's effective
``min.insync.replicas`` and ``unclean.leader.election.enable``.

Not thread-safe: the controller's event loop.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kafkacore.config import BrokerConfig, ConfigError, LogConfig
from kafkacore.controller.kraft.cluster_control import (
    BrokerControlState,
    BrokerHeartbeatManager,
    check_broker_epoch,
)
from kafkacore.controller.kraft.partition_change import (
    Election,
    PartitionChangeBuilder,
    initial_registration,
)
from kafkacore.controller.kraft.result import ApiError, ControllerError, ControllerResult
from kafkacore.controller.kraft.state import ControllerState, TopicIdPartition
from kafkacore.metadata.image.cluster import FENCE, IN_CONTROLLED_SHUTDOWN, UNFENCE
from kafkacore.metadata.image.configs import ConfigResource, ConfigResourceType, config_record
from kafkacore.metadata.image.topics import NO_LEADER, NO_LEADER_CHANGE, RECOVERED, RECOVERING
from kafkacore.metadata.records import RECORDS, MetadataRecord, MetadataRecordType
from kafkacore.placement import (
    BrokerMetadata,
    InvalidReplicationFactorError,
    assign_replicas_to_brokers,
)
from kafkacore.protocol.declared import DECLARED
from kafkacore.protocol.errors import ErrorCode
from kafkacore.zk.admin import new_topic_id, validate_topic_name
from kafkacore.zk.errors import InvalidTopicError

__all__ = ["ReplicationControl"]

log = logging.getLogger("kafkacore.controller")

T = MetadataRecordType
MAX_RECORDS_PER_USER_OP = 10000
_CHANGE_REGISTRATION: Any = RECORDS[T.BROKER_REGISTRATION_CHANGE_RECORD].cls
_TOPIC: Any = RECORDS[T.TOPIC_RECORD].cls
_REMOVE_TOPIC: Any = RECORDS[T.REMOVE_TOPIC_RECORD].cls
_UNREGISTER: Any = RECORDS[T.UNREGISTER_BROKER_RECORD].cls
_CREATE_TOPICS: Any = DECLARED[19].response.cls
_CREATE_PARTITIONS: Any = DECLARED[37].response.cls
_ALTER_PARTITION: Any = DECLARED[56].response.cls
_ELECT: Any = DECLARED[43].response.cls
_REASSIGN: Any = DECLARED[45].response.cls
_LIST_REASSIGN: Any = DECLARED[46].response.cls
_ASSIGN_DIRS: Any = DECLARED[73].response.cls
PREFERRED_ELECTION, UNCLEAN_ELECTION = 0, 1


def _registration_change(broker_id: int, epoch: int, version: int, **fields: Any) -> MetadataRecord:
    return MetadataRecord(
        T.BROKER_REGISTRATION_CHANGE_RECORD,
        version,
        _CHANGE_REGISTRATION(broker_id=broker_id, broker_epoch=epoch, **fields),
    )


class ReplicationControl:
    """See the module docstring. ``config`` is the controller's own config: the topic
    defaults (``num.partitions``, ``default.replication.factor``, ``min.insync.replicas``,
    ``unclean.leader.election.enable``) unless the cluster's dynamic defaults override them."""

    def __init__(self, config: BrokerConfig, heartbeats: BrokerHeartbeatManager) -> None:
        self.config = config
        self.heartbeats = heartbeats

    # -- configs that shape elections ---------------------------------------------------

    def _topic_config(self, state: ControllerState, topic: str, key: str) -> str | None:
        configs = state.image.configs
        value = configs.configs(ConfigResource(ConfigResourceType.TOPIC, topic)).get(key)
        if value is None:
            value = configs.configs(ConfigResource(ConfigResourceType.BROKER, "")).get(key)
        return value

    def effective_min_isr(self, state: ControllerState, topic_id: uuid.UUID) -> int:
        """Kafka's ``getTopicEffectiveMinIsr``: ``min.insync.replicas``, at most the
        replication factor."""
        topic = state.image.topics.by_id[topic_id]
        value = self._topic_config(state, topic.name, "min.insync.replicas")
        min_isr = int(value) if value is not None else self.config.get("min.insync.replicas")
        first = topic.partitions.get(0)
        replication_factor = len(first.replicas) if first is not None else min_isr
        return min(min_isr, replication_factor)

    def unclean_enabled(self, state: ControllerState, topic: str) -> bool:
        value = self._topic_config(state, topic, "unclean.leader.election.enable")
        if value is None:
            return bool(self.config.get("unclean.leader.election.enable"))
        return value.strip().lower() == "true"

    def _builder(
        self,
        state: ControllerState,
        key: TopicIdPartition,
        acceptable: Callable[[int], bool] | None = None,
    ) -> PartitionChangeBuilder:
        partition = state.partition(key)
        assert partition is not None
        image = state.image
        return PartitionChangeBuilder(
            partition,
            key[0],
            key[1],
            acceptable or state.is_active,
            image.features.metadata_version_or_raise(),
            self.effective_min_isr(state, key[0]),
            image.features.is_elr_enabled
            and image.features.metadata_version_or_raise().is_elr_supported,
            directory_of=state.default_dir,
        )

    def leader_and_isr_updates(
        self,
        state: ControllerState,
        partitions: Iterable[TopicIdPartition],
        *,
        remove: int = NO_LEADER,
        add: int = NO_LEADER,
        unclean_shutdown: int = NO_LEADER,
    ) -> list[MetadataRecord]:
        """Kafka's ``generateLeaderAndIsrUpdates``: ``remove`` leaves the ISR and may not
        lead; ``add`` may lead though not active yet; ``unclean_shutdown`` leaves the ISR
        and the ELR."""

        def acceptable(replica: int) -> bool:
            if replica in (remove, unclean_shutdown):
                return False
            return replica == add or state.is_active(replica)

        records = []
        for key in partitions:
            partition = state.partition(key)
            if partition is None:
                continue
            builder = self._builder(state, key, acceptable)
            topic = state.image.topics.by_id[key[0]].name
            if self.unclean_enabled(state, topic):
                builder.set_election(Election.UNCLEAN)
            if unclean_shutdown != NO_LEADER:
                builder.set_unclean_shutdown_replicas([unclean_shutdown])
            builder.set_target_isr(
                [r for r in partition.isr if r not in (remove, unclean_shutdown)]
            )
            record = builder.build()
            if record is not None:
                records.append(record)
        return records

    # -- brokers ---------------------------------------------------------------------------

    def broker_fenced(self, state: ControllerState, broker_id: int) -> list[MetadataRecord]:
        """``handleBrokerFenced``: out of every ISR, then fenced."""
        broker = state.broker(broker_id)
        if broker is None:
            raise RuntimeError(f"Can't find broker registration for broker {broker_id}")
        records = self.leader_and_isr_updates(
            state, state.partitions_with_broker_in_isr(broker_id), remove=broker_id
        )
        records.append(_registration_change(broker_id, broker.epoch, 0, fenced=FENCE))
        return records

    def broker_unfenced(
        self, state: ControllerState, broker_id: int, epoch: int
    ) -> list[MetadataRecord]:
        """``handleBrokerUnfenced``: unfenced, then leader of leaderless partitions it can lead."""
        records = [_registration_change(broker_id, epoch, 0, fenced=UNFENCE)]
        records += self.leader_and_isr_updates(
            state, state.partitions_with_no_leader(), add=broker_id
        )
        return records

    def broker_in_controlled_shutdown(
        self, state: ControllerState, broker_id: int, epoch: int
    ) -> list[MetadataRecord]:
        records = []
        broker = state.broker(broker_id)
        if broker is not None and not broker.in_controlled_shutdown:
            records.append(
                _registration_change(
                    broker_id, epoch, 1, in_controlled_shutdown=IN_CONTROLLED_SHUTDOWN
                )
            )
        records += self.leader_and_isr_updates(
            state, state.partitions_with_broker_in_isr(broker_id), remove=broker_id
        )
        return records

    def broker_shutdown(
        self, state: ControllerState, broker_id: int, clean: bool
    ) -> list[MetadataRecord]:
        """A broker re-registered with a new incarnation: its previous one is gone. An
        unclean shutdown (its PreviousBrokerEpoch is not the registered epoch) takes its
        replicas out of every ISR and ELR (KIP-966); a clean one, out of the ISRs."""
        mv = state.image.features.metadata_version_or_raise()
        if mv.is_elr_supported and not clean:
            records = self.leader_and_isr_updates(
                state, state.partitions_with_broker_in_isr(broker_id), unclean_shutdown=broker_id
            )
            records += self.leader_and_isr_updates(
                state, state.partitions_with_broker_in_elr(broker_id), unclean_shutdown=broker_id
            )
            return records
        return self.leader_and_isr_updates(
            state, state.partitions_with_broker_in_isr(broker_id), remove=broker_id
        )

    def process_heartbeat(
        self, state: ControllerState, request: Any
    ) -> ControllerResult[tuple[bool, BrokerControlState]]:
        """``processBrokerHeartbeat``: ``(caught up, next state)`` and its records."""
        broker_id, epoch = request.broker_id, request.broker_epoch
        check_broker_epoch(state, broker_id, epoch)
        register_offset = state.register_offset(broker_id)
        current, nxt = self.heartbeats.next_state(
            state, broker_id, request, register_offset, lambda: state.has_leaderships(broker_id)
        )
        records: list[MetadataRecord] = []
        if current is not nxt:
            if nxt in (BrokerControlState.FENCED, BrokerControlState.SHUTDOWN_NOW):
                records = self.broker_fenced(state, broker_id)
            elif nxt is BrokerControlState.UNFENCED:
                records = self.broker_unfenced(state, broker_id, epoch)
            elif nxt is BrokerControlState.CONTROLLED_SHUTDOWN:
                records = self.broker_in_controlled_shutdown(state, broker_id, epoch)
        self.heartbeats.touch(broker_id, request.current_metadata_offset)
        records += self._directories_offline(state, broker_id, epoch, request)
        caught_up = request.current_metadata_offset >= register_offset
        return ControllerResult(records, (caught_up, nxt), atomic=False)

    def _directories_offline(
        self, state: ControllerState, broker_id: int, epoch: int, request: Any
    ) -> list[MetadataRecord]:
        """``handleDirectoriesOffline``: partitions on newly offline log directories lose
        this replica; the registration keeps only the online directories."""
        mv = state.image.features.metadata_version_or_raise()
        broker = state.broker(broker_id)
        offline = set(getattr(request, "offline_log_dirs", None) or ())
        if not mv.is_directory_assignment_supported or broker is None or not offline:
            return []
        newly = [d for d in broker.directories if d in offline]
        if not newly:
            return []
        affected = []
        for topic_id, topic in state.image.topics.by_id.items():
            for pid, partition in topic.partitions.items():
                if partition.directory(broker_id) in newly:
                    affected.append((topic_id, pid))
        records = self.leader_and_isr_updates(state, affected, remove=broker_id)
        online = [d for d in broker.directories if d not in offline]
        records.append(_registration_change(broker_id, epoch, 2, log_dirs=online))
        return records

    def stale_broker_fencing(self, state: ControllerState) -> list[MetadataRecord]:
        """``maybeFenceOneStaleBroker``: fence one broker whose session expired."""
        for broker_id in self.heartbeats.stale_brokers(state):
            log.info("Fencing broker %d because its session has timed out.", broker_id)
            return self.broker_fenced(state, broker_id)
        return []

    def unregister_broker(self, state: ControllerState, broker_id: int) -> list[MetadataRecord]:
        broker = state.broker(broker_id)
        if broker is None:
            raise ControllerError(
                ErrorCode.BROKER_ID_NOT_REGISTERED,
                f"Broker ID {broker_id} is not currently registered",
            )
        records = self.leader_and_isr_updates(
            state, state.partitions_with_broker_in_isr(broker_id), remove=broker_id
        )
        records += self.leader_and_isr_updates(
            state, state.partitions_with_broker_in_elr(broker_id), remove=broker_id
        )
        records.append(
            MetadataRecord(
                T.UNREGISTER_BROKER_RECORD,
                0,
                _UNREGISTER(broker_id=broker_id, broker_epoch=broker.epoch),
            )
        )
        return records

    # -- topics ------------------------------------------------------------------------------

    def _placement(
        self, state: ControllerState, partitions: int, replication_factor: int
    ) -> list[list[int]]:
        """Replicas for new partitions over the brokers not shutting down (fenced ones
        too, as Kafka's placer: they stay out of the ISR until unfenced), with Kafka's
        ``StripedReplicaPlacer`` refusals."""
        candidates = [
            b
            for _, b in sorted(state.image.cluster.brokers.items())
            if not b.in_controlled_shutdown
        ]
        if not any(not b.fenced for b in candidates):
            raise InvalidReplicationFactorError("All brokers are currently fenced.")
        if replication_factor > len(candidates):
            raise InvalidReplicationFactorError(
                f"The target replication factor of {replication_factor} cannot be reached "
                f"because only {len(candidates)} broker(s) are registered."
            )
        brokers = [BrokerMetadata(b.id, b.rack) for b in candidates]
        assigned = assign_replicas_to_brokers(brokers, partitions, replication_factor)
        return [list(assigned[p]) for p in range(partitions)]

    def _validate_manual(
        self, state: ControllerState, replicas: Sequence[int], replication_factor: int | None
    ) -> None:
        if not replicas:
            raise ControllerError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                "The manual partition assignment includes an empty replica list.",
            )
        previous = None
        for broker_id in sorted(replicas):
            if state.broker(broker_id) is None:
                raise ControllerError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment includes broker {broker_id}, but no "
                    "such broker is registered.",
                )
            if broker_id == previous:
                raise ControllerError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment includes the broker {previous} more "
                    "than once.",
                )
            previous = broker_id
        if replication_factor is not None and len(replicas) != replication_factor:
            raise ControllerError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes a partition with {len(replicas)} "
                "replica(s), but this is not consistent with previous partitions, which "
                f"have {replication_factor} replica(s).",
            )

    def _partition_record(
        self,
        state: ControllerState,
        topic_id: uuid.UUID,
        pid: int,
        replicas: list[int],
        isr: list[int],
    ) -> MetadataRecord:
        mv = state.image.features.metadata_version_or_raise()
        registration = initial_registration(replicas, [state.default_dir(r) for r in replicas], isr)
        return registration.to_record(topic_id, pid, mv, state.image.features.is_elr_enabled)

    def create_topics(
        self, state: ControllerState, request: Any, version: int, describable: set[str] | None
    ) -> ControllerResult[Any]:
        """CreateTopics (``createTopics``): per topic its result; the records of every
        topic created, in one atomic batch (none when ``validateOnly``)."""
        errors: dict[str, ApiError] = {}
        names = [t.name for t in request.topics]
        for name in names:
            if names.count(name) > 1:
                errors[name] = ApiError(ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
                continue
            try:
                validate_topic_name(name)
            except InvalidTopicError as exc:
                errors[name] = ApiError(ErrorCode.INVALID_TOPIC_EXCEPTION, str(exc))
                continue
            if name in state.image.topics.by_name:
                errors[name] = ApiError(
                    ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists."
                )
            elif _collision(name, state.image.topics.by_name):
                errors[name] = ApiError(
                    ErrorCode.INVALID_TOPIC_EXCEPTION,
                    f"Topic '{name}' collides with existing topic: "
                    f"{_collision(name, state.image.topics.by_name)}",
                )
        records: list[MetadataRecord] = []
        results = []
        for topic in request.topics:
            result = _CREATE_TOPICS.CreatableTopicResult(
                name=topic.name,
                topic_id=uuid.UUID(int=0),
                error_code=0,
                error_message=None,
                num_partitions=-1,
                replication_factor=-1,
                configs=None if version >= 5 else [],
            )
            results.append(result)
            error = errors.get(topic.name)
            if error is None:
                try:
                    self._create_topic(state, topic, version, result, records, describable)
                except ControllerError as exc:
                    error = exc.error
            if error is not None:
                result.error_code, result.error_message = error.code, error.message
                result.topic_config_error_code = 0
        response = _CREATE_TOPICS(throttle_time_ms=0, topics=results)
        return ControllerResult([] if request.validate_only else records, response)

    def _create_topic(
        self,
        state: ControllerState,
        topic: Any,
        version: int,
        result: Any,
        records: list[MetadataRecord],
        describable: set[str] | None,
    ) -> None:
        nulls = [c.name for c in topic.configs if c.value is None]
        if nulls:
            raise ControllerError(
                ErrorCode.INVALID_CONFIG,
                f"Null value not supported for topic configs: {','.join(nulls)}",
            )
        overrides = {c.name: c.value for c in topic.configs}
        assignment: list[list[int]] = []
        isrs: list[list[int]] = []
        if topic.assignments:
            if topic.replication_factor != -1:
                raise ControllerError(
                    ErrorCode.INVALID_REQUEST,
                    "A manual partition assignment was specified, but replication factor "
                    "was not set to -1.",
                )
            if topic.num_partitions != -1:
                raise ControllerError(
                    ErrorCode.INVALID_REQUEST,
                    "A manual partition assignment was specified, but numPartitions was not "
                    "set to -1.",
                )
            by_index: dict[int, list[int]] = {}
            replication_factor: int | None = None
            for item in topic.assignments:
                if item.partition_index in by_index:
                    raise ControllerError(
                        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                        "Found multiple manual partition assignments for partition "
                        f"{item.partition_index}",
                    )
                self._validate_manual(state, item.broker_ids, replication_factor)
                replication_factor = len(item.broker_ids)
                isr = [r for r in item.broker_ids if state.is_active(r)]
                if not isr:
                    raise ControllerError(
                        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                        "All brokers specified in the manual partition assignment for "
                        f"partition {item.partition_index} are fenced or in controlled shutdown.",
                    )
                by_index[item.partition_index] = list(item.broker_ids)
            if sorted(by_index) != list(range(len(by_index))):
                raise ControllerError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    "partitions should be a consecutive 0-based integer sequence",
                )
            assignment = [by_index[p] for p in range(len(by_index))]
            isrs = [[r for r in replicas if state.is_active(r)] for replicas in assignment]
        elif topic.replication_factor < -1 or topic.replication_factor == 0:
            raise ControllerError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                "Replication factor must be larger than 0, or -1 to use the default value.",
            )
        elif topic.num_partitions < -1 or topic.num_partitions == 0:
            raise ControllerError(
                ErrorCode.INVALID_PARTITIONS,
                "Number of partitions was set to an invalid non-positive value.",
            )
        else:
            partitions = (
                self.config.num_partitions if topic.num_partitions == -1 else topic.num_partitions
            )
            rf = (
                self.config.default_replication_factor
                if topic.replication_factor == -1
                else topic.replication_factor
            )
            try:
                assignment = self._placement(state, partitions, rf)
            except InvalidReplicationFactorError as exc:
                raise ControllerError(
                    ErrorCode.INVALID_REPLICATION_FACTOR,
                    f"Unable to replicate the partition {rf} time(s): {exc}",
                ) from None
            isrs = [[r for r in replicas if state.is_active(r)] for replicas in assignment]
            if any(not isr for isr in isrs):
                raise ControllerError(
                    ErrorCode.INVALID_REPLICATION_FACTOR,
                    f"Unable to replicate the partition {rf} time(s): All brokers are "
                    "currently fenced or in controlled shutdown.",
                )
        try:
            config = LogConfig(overrides, self.config)
        except ConfigError as exc:
            raise ControllerError(ErrorCode.INVALID_CONFIG, str(exc)) from None
        topic_id = new_topic_id()
        result.topic_id = topic_id
        result.num_partitions = len(assignment)
        result.replication_factor = len(assignment[0])
        if describable is not None and topic.name not in describable:
            result.topic_config_error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif version >= 5:
            result.configs = [
                _CREATE_TOPICS.CreatableTopicConfigs(
                    name=e.name,
                    value=None if e.is_sensitive else e.value,
                    read_only=e.read_only,
                    config_source=int(e.source),
                    is_sensitive=e.is_sensitive,
                )
                for e in sorted(config.describe(include_synonyms=False), key=lambda e: e.name)
            ]
        records.append(
            MetadataRecord(T.TOPIC_RECORD, 0, _TOPIC(name=topic.name, topic_id=topic_id))
        )
        resource = ConfigResource(ConfigResourceType.TOPIC, topic.name)
        records.extend(config_record(resource, k, v) for k, v in overrides.items())
        for pid, (replicas, isr) in enumerate(zip(assignment, isrs, strict=True)):
            records.append(self._partition_record(state, topic_id, pid, replicas, isr))
        if len(records) > MAX_RECORDS_PER_USER_OP:
            raise ControllerError(
                ErrorCode.POLICY_VIOLATION,
                "Excessively large number of partitions per request.",
            )

    def delete_topics(
        self, state: ControllerState, topic_ids: Sequence[uuid.UUID]
    ) -> ControllerResult[dict[uuid.UUID, ApiError]]:
        results: dict[uuid.UUID, ApiError] = {}
        records = []
        for topic_id in topic_ids:
            if topic_id not in state.image.topics.by_id:
                results[topic_id] = ApiError(
                    ErrorCode.UNKNOWN_TOPIC_ID, "This server does not host this topic ID."
                )
                continue
            results[topic_id] = ApiError()
            records.append(
                MetadataRecord(T.REMOVE_TOPIC_RECORD, 0, _REMOVE_TOPIC(topic_id=topic_id))
            )
        return ControllerResult(records, results)

    def create_partitions(self, state: ControllerState, request: Any) -> ControllerResult[Any]:
        records: list[MetadataRecord] = []
        results = []
        for topic in request.topics:
            error = ApiError()
            try:
                records.extend(self._create_partitions(state, topic))
            except ControllerError as exc:
                error = exc.error
            results.append(
                _CREATE_PARTITIONS.CreatePartitionsTopicResult(
                    name=topic.name, error_code=error.code, error_message=error.message
                )
            )
        response = _CREATE_PARTITIONS(throttle_time_ms=0, results=results)
        return ControllerResult([] if request.validate_only else records, response)

    def _create_partitions(self, state: ControllerState, topic: Any) -> list[MetadataRecord]:
        image = state.image.topics.topic(topic.name)
        if image is None:
            raise ControllerError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                "This server does not host this topic-partition.",
            )
        existing = len(image.partitions)
        if topic.count == existing:
            raise ControllerError(
                ErrorCode.INVALID_PARTITIONS, f"Topic already has {existing} partition(s)."
            )
        if topic.count < existing:
            raise ControllerError(
                ErrorCode.INVALID_PARTITIONS,
                f"The topic {topic.name} currently has {existing} partition(s); {topic.count} "
                "would not be an increase.",
            )
        additional = topic.count - existing
        if topic.assignments is not None and len(topic.assignments) != additional:
            raise ControllerError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Attempted to add {additional} additional partition(s), but only "
                f"{len(topic.assignments)} assignment(s) were specified.",
            )
        rf = len(image.partitions[0].replicas)
        if topic.assignments is not None:
            assignment = []
            for i, item in enumerate(topic.assignments):
                self._validate_manual(state, item.broker_ids, rf)
                if not any(state.is_active(r) for r in item.broker_ids):
                    raise ControllerError(
                        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                        "All brokers specified in the manual partition assignment for "
                        f"partition {existing + i} are fenced or in controlled shutdown.",
                    )
                assignment.append(list(item.broker_ids))
        else:
            try:
                assignment = self._placement(state, additional, rf)
            except InvalidReplicationFactorError as exc:
                raise ControllerError(
                    ErrorCode.INVALID_REPLICATION_FACTOR,
                    f"Unable to replicate the partition {rf} time(s): {exc}",
                ) from None
        records = []
        for offset, replicas in enumerate(assignment):
            isr = [r for r in replicas if state.is_active(r)]
            if not isr:
                raise ControllerError(
                    ErrorCode.INVALID_REPLICATION_FACTOR,
                    f"Unable to replicate the partition {rf} time(s): All brokers are currently "
                    "fenced or in controlled shutdown.",
                )
            records.append(
                self._partition_record(state, image.id, existing + offset, replicas, isr)
            )
        return records

    # -- AlterPartition ----------------------------------------------------------------------

    def alter_partition(
        self, state: ControllerState, request: Any, version: int
    ) -> ControllerResult[Any]:
        check_broker_epoch(state, request.broker_id, request.broker_epoch)
        records: list[MetadataRecord] = []
        topics = []
        for topic_data in request.topics:
            out = _ALTER_PARTITION.TopicData(
                topic_name=getattr(topic_data, "topic_name", ""),
                topic_id=topic_data.topic_id,
                partitions=[],
            )
            topics.append(out)
            if version > 1:
                topic = state.image.topics.by_id.get(topic_data.topic_id)
            else:
                topic = state.image.topics.by_name.get(topic_data.topic_name)
            if topic is None:
                code = (
                    ErrorCode.UNKNOWN_TOPIC_ID
                    if version > 1
                    else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                )
                out.partitions = [
                    _ALTER_PARTITION.PartitionData(
                        partition_index=p.partition_index, error_code=code
                    )
                    for p in topic_data.partitions
                ]
                continue
            for data in topic_data.partitions:
                out.partitions.append(
                    self._alter_one(state, request.broker_id, topic.id, data, version, records)
                )
        response = _ALTER_PARTITION(throttle_time_ms=0, error_code=0, topics=topics)
        return ControllerResult(records, response, atomic=False)

    def _alter_one(
        self,
        state: ControllerState,
        broker_id: int,
        topic_id: uuid.UUID,
        data: Any,
        version: int,
        records: list[MetadataRecord],
    ) -> Any:
        pid = data.partition_index
        key = (topic_id, pid)
        partition = state.partition(key)
        if version >= 3:
            new_isr = [(b.broker_id, b.broker_epoch) for b in data.new_isr_with_epochs]
        else:
            new_isr = [(b, -1) for b in data.new_isr]
        error = self._validate_alter(state, broker_id, partition, data, new_isr, version)
        if error != ErrorCode.NONE:
            return _ALTER_PARTITION.PartitionData(partition_index=pid, error_code=error)
        assert partition is not None
        builder = self._builder(state, key)
        if self.unclean_enabled(state, state.image.topics.by_id[topic_id].name):
            builder.set_election(Election.UNCLEAN)
        builder.set_target_isr([b for b, _ in new_isr])
        builder.set_target_recovery(data.leader_recovery_state)
        record = builder.build()
        if record is not None:
            records.append(record)
            partition = partition.merge(record.value)
            if record.value.leader not in (broker_id, NO_LEADER_CHANGE):
                code = (
                    ErrorCode.NEW_LEADER_ELECTED if version > 1 else ErrorCode.FENCED_LEADER_EPOCH
                )
                return _ALTER_PARTITION.PartitionData(partition_index=pid, error_code=code)
        return _ALTER_PARTITION.PartitionData(
            partition_index=pid,
            error_code=0,
            leader_id=partition.leader,
            isr=list(partition.isr),
            leader_recovery_state=partition.leader_recovery_state,
            leader_epoch=partition.leader_epoch,
            partition_epoch=partition.partition_epoch,
        )

    def _validate_alter(
        self,
        state: ControllerState,
        broker_id: int,
        partition: Any,
        data: Any,
        new_isr: list[tuple[int, int]],
        version: int,
    ) -> int:
        """Kafka's ``validateAlterPartitionData``, in its order."""
        if partition is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if data.leader_epoch > partition.leader_epoch:
            return ErrorCode.NOT_CONTROLLER
        if data.partition_epoch > partition.partition_epoch:
            return ErrorCode.NOT_CONTROLLER
        if data.leader_epoch < partition.leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if broker_id != partition.leader:
            return ErrorCode.INVALID_REQUEST
        if data.partition_epoch < partition.partition_epoch:
            return ErrorCode.INVALID_UPDATE_VERSION
        isr = [b for b, _ in new_isr]
        if len(set(isr)) != len(isr) or any(b not in partition.replicas for b in isr):
            return ErrorCode.INVALID_REQUEST  # Replicas.validateIsr
        if partition.leader not in isr:
            return ErrorCode.INVALID_REQUEST
        if data.leader_recovery_state == RECOVERING and len(isr) > 1:
            return ErrorCode.INVALID_REQUEST
        if (
            partition.leader_recovery_state == RECOVERED
            and data.leader_recovery_state == RECOVERING
        ):
            return ErrorCode.INVALID_REQUEST
        for member, member_epoch in new_isr:
            broker = state.broker(member)
            if (
                broker is None
                or broker.in_controlled_shutdown
                or broker.fenced
                or (member_epoch != -1 and broker.epoch != member_epoch)
            ):
                return (
                    ErrorCode.INELIGIBLE_REPLICA
                    if version > 1
                    else ErrorCode.OPERATION_NOT_ATTEMPTED
                )
        return ErrorCode.NONE

    # -- elections and reassignments -----------------------------------------------------

    def elect_leaders(self, state: ControllerState, request: Any) -> ControllerResult[Any]:
        election_type = request.election_type
        if election_type not in (PREFERRED_ELECTION, UNCLEAN_ELECTION):
            raise ControllerError(
                ErrorCode.INVALID_REQUEST, f"Unknown election type {election_type}"
            )
        records: list[MetadataRecord] = []
        results = []
        if request.topic_partitions is None:
            for name, topic in sorted(state.image.topics.by_name.items()):
                entry = _ELECT.ReplicaElectionResult(topic=name, partition_result=[])
                results.append(entry)
                for pid in sorted(topic.partitions):
                    error = self._elect(state, name, pid, election_type, records)
                    if error.code != ErrorCode.ELECTION_NOT_NEEDED:
                        entry.partition_result.append(_election_result(pid, error))
        else:
            for item in request.topic_partitions:
                entry = _ELECT.ReplicaElectionResult(topic=item.topic, partition_result=[])
                results.append(entry)
                for pid in item.partitions:
                    error = self._elect(state, item.topic, pid, election_type, records)
                    entry.partition_result.append(_election_result(pid, error))
        response = _ELECT(throttle_time_ms=0, error_code=0, replica_election_results=results)
        return ControllerResult(records, response, atomic=False)

    def _elect(
        self,
        state: ControllerState,
        name: str,
        pid: int,
        election_type: int,
        records: list[MetadataRecord],
    ) -> ApiError:
        topic = state.image.topics.by_name.get(name)
        if topic is None:
            return ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {name}")
        partition = topic.partitions.get(pid)
        if partition is None:
            return ApiError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {name}-{pid}"
            )
        has_preferred = bool(partition.replicas) and partition.leader == partition.replicas[0]
        if (election_type == PREFERRED_ELECTION and has_preferred) or (
            election_type == UNCLEAN_ELECTION and partition.has_leader
        ):
            return ApiError(ErrorCode.ELECTION_NOT_NEEDED)
        builder = self._builder(state, (topic.id, pid))
        builder.set_election(
            Election.PREFERRED if election_type == PREFERRED_ELECTION else Election.UNCLEAN
        )
        record = builder.build()
        if record is None:
            if election_type == PREFERRED_ELECTION:
                return ApiError(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE)
            return ApiError(ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE)
        records.append(record)
        return ApiError()

    def elect_preferred(
        self, state: ControllerState, key: TopicIdPartition
    ) -> MetadataRecord | None:
        """A preferred leader election (the periodic leader balancing)."""
        return self._builder(state, key).set_election(Election.PREFERRED).build()

    def alter_reassignments(self, state: ControllerState, request: Any) -> ControllerResult[Any]:
        records: list[MetadataRecord] = []
        responses = []
        allow_rf_change = getattr(request, "allow_replication_factor_change", True)
        for topic in request.topics:
            out = _REASSIGN.ReassignableTopicResponse(name=topic.name, partitions=[])
            responses.append(out)
            for part in topic.partitions:
                error = ApiError()
                try:
                    record = self._reassign(state, topic.name, part, allow_rf_change)
                    if record is not None:
                        records.append(record)
                except ControllerError as exc:
                    error = exc.error
                out.partitions.append(
                    _REASSIGN.ReassignablePartitionResponse(
                        partition_index=part.partition_index,
                        error_code=error.code,
                        error_message=error.message,
                    )
                )
        response = _REASSIGN(
            throttle_time_ms=0,
            allow_replication_factor_change=allow_rf_change,
            error_code=0,
            error_message=None,
            responses=responses,
        )
        return ControllerResult(records, response)

    def _reassign(
        self, state: ControllerState, name: str, target: Any, allow_rf_change: bool
    ) -> MetadataRecord | None:
        topic = state.image.topics.by_name.get(name)
        if topic is None:
            raise ControllerError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {name}."
            )
        pid = target.partition_index
        partition = topic.partitions.get(pid)
        if partition is None:
            raise ControllerError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {name}:{pid}."
            )
        key = (topic.id, pid)
        builder = self._builder(state, key)
        if target.replicas is None:  # cancel
            if not partition.is_reassigning:
                raise ControllerError(
                    ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
                    "No partition reassignment is in progress for this topic or partition.",
                )
            original = [r for r in partition.replicas if r not in partition.adding_replicas]
            isr = [r for r in partition.isr if r not in partition.adding_replicas]
            if not isr:
                if not original:
                    raise ControllerError(
                        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                        "Invalid replica assignment: addingReplicas contains all replicas.",
                    )
                isr = [original[0]]
                if not self.unclean_enabled(state, name):
                    raise ControllerError(
                        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                        f"Unable to revert partition assignment for {name}:{pid} because it "
                        "would require an unclean leader election.",
                    )
            if self.unclean_enabled(state, name):
                builder.set_election(Election.UNCLEAN)
            builder.set_target_isr(isr).set_target_replicas(original)
            builder.set_target_removing([]).set_target_adding([])
            return builder.build()
        replicas = list(target.replicas)
        self._validate_manual(state, replicas, None)
        if not allow_rf_change and len(replicas) != len(
            [r for r in partition.replicas if r not in partition.adding_replicas]
        ):
            raise ControllerError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                "The replication factor is changed from "
                f"{len(partition.replicas)} to {len(replicas)}",
            )
        current = list(partition.replicas)
        removing = sorted(set(current) - set(replicas))
        adding = sorted(set(replicas) - set(current))
        merged = replicas + removing
        if merged != current:
            builder.set_target_replicas(merged)
        if removing:
            builder.set_target_removing(removing)
        if adding:
            builder.set_target_adding(adding)
        return builder.build()

    def list_reassignments(self, state: ControllerState, request: Any) -> Any:
        topics = []
        if request.topics is None:
            wanted = {
                name: sorted(t.partitions) for name, t in sorted(state.image.topics.by_name.items())
            }
        else:
            wanted = {t.name: list(t.partition_indexes) for t in request.topics}
        for name, pids in wanted.items():
            topic = state.image.topics.by_name.get(name)
            if topic is None:
                continue
            ongoing = []
            for pid in pids:
                partition = topic.partitions.get(pid)
                if partition is not None and partition.is_reassigning:
                    ongoing.append(
                        _LIST_REASSIGN.OngoingPartitionReassignment(
                            partition_index=pid,
                            replicas=list(partition.replicas),
                            adding_replicas=list(partition.adding_replicas),
                            removing_replicas=list(partition.removing_replicas),
                        )
                    )
            if ongoing:
                topics.append(
                    _LIST_REASSIGN.OngoingTopicReassignment(name=name, partitions=ongoing)
                )
        return _LIST_REASSIGN(throttle_time_ms=0, error_code=0, error_message=None, topics=topics)

    def assign_replicas_to_dirs(
        self, state: ControllerState, request: Any
    ) -> ControllerResult[Any]:
        """AssignReplicasToDirs: the replicas' log directories (Kafka's
        ``handleAssignReplicasToDirs``)."""
        check_broker_epoch(state, request.broker_id, request.broker_epoch)
        broker_id = request.broker_id
        broker = state.broker(broker_id)
        assert broker is not None
        records: list[MetadataRecord] = []
        directories = []
        for directory in request.directories:
            out_topics = []
            for topic in directory.topics:
                out_parts = []
                for part in topic.partitions:
                    key = (topic.topic_id, part.partition_index)
                    partition = state.partition(key)
                    if partition is None:
                        code = (
                            ErrorCode.UNKNOWN_TOPIC_ID
                            if topic.topic_id not in state.image.topics.by_id
                            else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                        )
                    elif broker_id not in partition.replicas:
                        code = ErrorCode.NOT_LEADER_OR_FOLLOWER
                    else:
                        code = ErrorCode.NONE
                        if partition.directory(broker_id) != directory.id:
                            builder = self._builder(state, key)
                            builder.set_directory(broker_id, directory.id)
                            record = builder.build()
                            if record is not None:
                                records.append(record)
                    out_parts.append(
                        _ASSIGN_DIRS.PartitionData(
                            partition_index=part.partition_index, error_code=code
                        )
                    )
                out_topics.append(
                    _ASSIGN_DIRS.TopicData(topic_id=topic.topic_id, partitions=out_parts)
                )
            directories.append(_ASSIGN_DIRS.DirectoryData(id=directory.id, topics=out_topics))
        response = _ASSIGN_DIRS(throttle_time_ms=0, error_code=0, directories=directories)
        return ControllerResult(records, response)


def _election_result(pid: int, error: ApiError) -> Any:
    return _ELECT.PartitionResult(
        partition_id=pid, error_code=error.code, error_message=error.message
    )


def _collision(name: str, existing: Mapping[str, Any]) -> str | None:
    """Kafka's ``Topic.hasCollisionChars``: '.' and '_' collide in metric names."""
    if "." not in name and "_" not in name:
        return None
    normalized = name.replace(".", "_")
    for other in existing:
        if other != name and other.replace(".", "_") == normalized:
            return other
    return None
