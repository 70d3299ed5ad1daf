"""One partition's next state, as a PartitionChangeRecord (Kafka 4.3's
``PartitionChangeBuilder``): the target ISR, replicas and reassignment sets a caller
asks for, then - in Kafka's order - reassignment completion, the eligible leader
replicas (KIP-966), the leader election, the leader epoch bumps, and the record with only
the fields that changed (``None`` when nothing did).

Elections:

* ``ONLINE`` (the default): keep the leader if it may still lead, else the first replica
  in assignment order that is in the target ISR (or, with an empty ISR, in the ELR) and
  acceptable (registered, unfenced, not shutting down);
* ``PREFERRED``: the first replica if it may lead, else as ``ONLINE``;
* ``UNCLEAN``: as ``ONLINE``, then any acceptable replica (its ISR becomes just itself
  and the leader recovery state RECOVERING).

With ELR on, a partition whose target ISR is below ``min.insync.replicas`` keeps the
replicas that left the ISR as eligible leaders (not those that shut down uncleanly); a
leader elected from the ELR becomes the ISR alone. The last known leader is remembered
in LastKnownElr when the partition loses its leader, for balanced recovery.

Pure: a builder is used once, by one thread.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from kafkacore._java import java_hash_set_order
from kafkacore.metadata.image.topics import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    RECOVERED,
    RECOVERING,
    PartitionRegistration,
)
from kafkacore.metadata.records import RECORDS, MetadataRecord, MetadataRecordType
from kafkacore.metadata.versions import MetadataVersion

__all__ = ["Election", "PartitionChangeBuilder", "complete_reassignment"]

_CHANGE: Any = RECORDS[MetadataRecordType.PARTITION_CHANGE_RECORD].cls


class Election(enum.Enum):
    PREFERRED = "preferred"
    ONLINE = "online"
    UNCLEAN = "unclean"


def _hash_set(items: Sequence[int]) -> list[int]:
    """A ``HashSet<Integer>``'s iteration order (Kafka builds the ELR through one)."""
    return java_hash_set_order(items, lambda i: i)


def complete_reassignment(
    replicas: Sequence[int], adding: Sequence[int], removing: Sequence[int], isr: Sequence[int]
) -> tuple[list[int], list[int]] | None:
    """Kafka's ``PartitionReassignmentReplicas.maybeCompleteReassignment``: once the ISR
    without the removed replicas holds every remaining replica, the reassignment is
    done: ``(replicas, isr)`` without the removed ones; ``None`` otherwise."""
    if not adding and not removing:
        return None
    new_isr, new_replicas = list(isr), list(replicas)
    if removing:
        new_isr = [r for r in isr if r not in removing]
        new_replicas = [r for r in replicas if r not in removing]
        if not new_isr or not new_replicas:
            return None
    if not set(new_replicas) <= set(new_isr):
        return None
    return new_replicas, new_isr


class PartitionChangeBuilder:
    """See the module docstring. ``acceptable(replica)`` says whether a replica may lead
    now; ``directory_of(replica)`` gives the log directory of a replica new to the
    partition."""

    def __init__(
        self,
        partition: PartitionRegistration,
        topic_id: uuid.UUID,
        partition_id: int,
        acceptable: Callable[[int], bool],
        mv: MetadataVersion,
        min_isr: int,
        elr_enabled: bool,
        directory_of: Callable[[int], uuid.UUID] | None = None,
    ) -> None:
        self.partition = partition
        self.topic_id = topic_id
        self.partition_id = partition_id
        self.acceptable = acceptable
        self.mv = mv
        self.min_isr = min_isr
        self.elr_enabled = elr_enabled
        self.target_isr = list(partition.isr)
        self.target_replicas = list(partition.replicas)
        self.target_removing = list(partition.removing_replicas)
        self.target_adding = list(partition.adding_replicas)
        self.target_elr = list(partition.elr)
        self.target_last_known_elr = list(partition.last_known_elr)
        self.target_recovery = partition.leader_recovery_state
        self.target_directories = dict(zip(partition.replicas, partition.directories, strict=False))
        self.unclean_shutdown_replicas: list[int] = []
        self.election = Election.ONLINE
        self.directory_of = directory_of

    # -- what the caller wants ----------------------------------------------------------

    def set_target_isr(self, isr: Sequence[int]) -> PartitionChangeBuilder:
        self.target_isr = list(isr)
        return self

    def set_target_replicas(self, replicas: Sequence[int]) -> PartitionChangeBuilder:
        self.target_replicas = list(replicas)
        return self

    def set_target_adding(self, adding: Sequence[int]) -> PartitionChangeBuilder:
        self.target_adding = list(adding)
        return self

    def set_target_removing(self, removing: Sequence[int]) -> PartitionChangeBuilder:
        self.target_removing = list(removing)
        return self

    def set_election(self, election: Election) -> PartitionChangeBuilder:
        self.election = election
        return self

    def set_target_recovery(self, state: int) -> PartitionChangeBuilder:
        self.target_recovery = state
        return self

    def set_unclean_shutdown_replicas(self, replicas: Sequence[int]) -> PartitionChangeBuilder:
        self.unclean_shutdown_replicas = list(replicas)
        return self

    def set_directory(self, replica: int, directory: uuid.UUID) -> PartitionChangeBuilder:
        self.target_directories[replica] = directory
        return self

    # -- the decisions, in Kafka's order ------------------------------------------------

    def _is_valid_new_leader(self, replica: int) -> bool:
        in_isr = replica in self.target_isr
        in_elr = not self.target_isr and replica in self.target_elr
        return (in_isr or in_elr) and self.acceptable(replica)

    def _can_elect_last_known_leader(self) -> bool:
        if not self.elr_enabled or self.target_elr or self.target_isr:
            return False
        return len(self.partition.last_known_elr) == 1

    def elect_leader(self) -> tuple[int, bool]:
        """``(leader, unclean)``."""
        leader = self.partition.leader
        if self.election is Election.PREFERRED:
            preferred = self.target_replicas[0] if self.target_replicas else NO_LEADER
            if preferred != NO_LEADER and self._is_valid_new_leader(preferred):
                return preferred, False
            if self._is_valid_new_leader(leader):
                return leader, False
            for replica in self.target_replicas[1:]:
                if self._is_valid_new_leader(replica):
                    return replica, False
        else:
            if self._is_valid_new_leader(leader):
                return leader, False
            for replica in self.target_replicas:
                if self._is_valid_new_leader(replica):
                    return replica, False
        if self._can_elect_last_known_leader():
            return self.partition.last_known_elr[0], True
        if self.election is Election.UNCLEAN:
            for replica in self.target_replicas:
                if self.acceptable(replica):
                    return replica, True
        return NO_LEADER, False

    def _complete_reassignment(self) -> None:
        done = complete_reassignment(
            self.target_replicas, self.target_adding, self.target_removing, self.target_isr
        )
        if done is not None:
            self.target_replicas, self.target_isr = done
            self.target_adding, self.target_removing = [], []

    def _populate_target_elr(self) -> None:
        if not self.elr_enabled:
            return
        if len(self.target_isr) >= self.min_isr:
            self.target_elr, self.target_last_known_elr = [], []
            return
        isr = set(self.target_isr)
        candidates = _hash_set([*self.target_elr, *self.partition.isr])
        self.target_elr = [
            r for r in candidates if r not in isr and r not in self.unclean_shutdown_replicas
        ]
        with_last = _hash_set([*candidates, *self.target_last_known_elr])
        self.target_last_known_elr = [
            r for r in with_last if r not in isr and r not in self.target_elr
        ]

    def _try_election(self, changes: dict[str, Any]) -> None:
        node, unclean = self.elect_leader()
        if node == self.partition.leader:
            return
        if node in self.target_elr:
            self.target_isr = [node]
            self.target_elr = [r for r in self.target_elr if r != node]
        changes["leader"] = node
        if unclean:
            changes["isr"] = [node]
            if self.partition.leader_recovery_state != RECOVERING:
                changes["leader_recovery_state"] = RECOVERING

    def _update_record_elr(self, changes: dict[str, Any]) -> None:
        clean = "isr" not in changes
        if not clean or not self.elr_enabled:
            self.target_elr, self.target_last_known_elr = [], []
        if self.target_elr != list(self.partition.elr):
            changes["eligible_leader_replicas"] = self.target_elr
        # balanced recovery keeps LastKnownElr as the last known leader instead

    def _update_last_known_leader(self, changes: dict[str, Any]) -> None:
        if not self.elr_enabled:
            return
        leader = changes.get("leader", NO_LEADER_CHANGE)
        if leader == NO_LEADER and not self.partition.last_known_elr:
            changes["last_known_elr"] = [self.partition.leader]
        elif leader >= 0 and self.partition.last_known_elr:
            changes["last_known_elr"] = []

    def _set_assignment_changes(self, changes: dict[str, Any]) -> None:
        if self.target_replicas:
            if self.mv.is_directory_assignment_supported:
                directories = []
                for replica in self.target_replicas:
                    directory = self.target_directories.get(replica)
                    if directory is None:
                        if self.directory_of is None:
                            raise RuntimeError("no default directory for a new replica")
                        directory = self.directory_of(replica)
                    directories.append(directory)
                if directories != list(self.partition.directories):
                    changes["directories"] = directories
            if self.target_replicas != list(self.partition.replicas):
                changes["replicas"] = self.target_replicas
        if self.target_removing != list(self.partition.removing_replicas):
            changes["removing_replicas"] = self.target_removing
        if self.target_adding != list(self.partition.adding_replicas):
            changes["adding_replicas"] = self.target_adding

    def build(self) -> MetadataRecord | None:
        """The PartitionChangeRecord, or ``None`` if nothing would change."""
        changes: dict[str, Any] = {}
        self._complete_reassignment()
        self._populate_target_elr()
        self._try_election(changes)
        if "leader" not in changes and not set(self.partition.replicas) <= set(
            self.target_replicas
        ):
            changes["leader"] = self.partition.leader  # a reassignment removing replicas
        self._update_record_elr(changes)
        if (
            "isr" not in changes
            and (self.target_isr or self.elr_enabled)
            and self.target_isr != list(self.partition.isr)
        ):
            changes["isr"] = self.target_isr
        if (
            self.mv.is_leader_epoch_bump_required_on_isr_shrink
            and "leader" not in changes
            and "isr" in changes
            and not set(self.partition.isr) <= set(changes["isr"])
        ):
            changes["leader"] = self.partition.leader
        self._update_last_known_leader(changes)
        self._set_assignment_changes(changes)
        if (
            self.target_recovery != self.partition.leader_recovery_state
            and "leader_recovery_state" not in changes
        ):
            changes["leader_recovery_state"] = self.target_recovery
        if not changes:
            return None
        value = _CHANGE(topic_id=self.topic_id, partition_id=self.partition_id, **changes)
        return MetadataRecord(
            MetadataRecordType.PARTITION_CHANGE_RECORD,
            self.mv.partition_change_record_version,
            value,
        )


def initial_registration(
    replicas: Sequence[int], directories: Sequence[uuid.UUID], isr: Sequence[int]
) -> PartitionRegistration:
    """A new partition (Kafka's ``buildPartitionRegistration``): the first ISR member
    leads at epoch 0."""
    return PartitionRegistration(
        replicas=tuple(replicas),
        directories=tuple(directories),
        isr=tuple(isr),
        leader=isr[0],
        leader_recovery_state=RECOVERED,
        leader_epoch=0,
        partition_epoch=0,
    )
