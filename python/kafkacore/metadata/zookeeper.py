"""The ZooKeeper metadata store of a cluster broker (:class:`MetadataStore` at Kafka's
classic ZooKeeper paths, through :class:`~kafkacore.zk.client.KafkaZkClient`).

What a broker writes here is what Kafka's ``AdminZkClient`` writes for it: a new topic's
config (``/config/topics/<t>``) and then its assignment (``/brokers/topics/<t>``), a new
partition count, config changes with their ``/config/changes`` notification, the
deletion marker ``/admin/delete_topics/<t>``. Leaders and ISRs are the controller's to
write: :meth:`ZooKeeperMetadataStore.set_partition_state` is refused here, and the
partitions' states reach the broker through LeaderAndIsr and UpdateMetadata, not through
this store.

ACLs (the authorizer's) live where Kafka 3.x's ``AclAuthorizer`` keeps them:
``/kafka-acl/<Type>/<name>`` (LITERAL) and ``/kafka-acl-extended/prefixed/<Type>/<name>``
(PREFIXED), written with a versioned read-modify-write and announced with a sequential
``acl_changes_<seq>`` node under ``/kafka-acl-changes`` or ``/kafka-acl-extended-changes``.
Every broker loads them all at start-up, follows the notifications (re-reading the named
resource's znode) and deletes notifications older than 15 minutes, as Kafka's
``ZkNodeChangeNotificationListener`` does; listeners hear ``on_acls_changed``.

What the store tells its listeners: topic config changes (``on_topic_configs_changed``),
dynamic broker config changes (``on_broker_configs_changed``) and client quota changes
(``on_quota_configs_changed``, entities of ``users``, ``clients`` and ``ips``), learnt from
the change notifications (Kafka's ``ZkConfigManager``).

Thread-safety: the :class:`MetadataStore` methods block and are called off the event loop
(the broker's I/O threads); they run the client's coroutines on the loop the client lives
on and wait for them. Calling one on that loop's thread is a ``RuntimeError`` (it would
wait for itself). Listeners are called on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
import uuid
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from kafkacore.metadata.store import (
    AclUpdate,
    MetadataListener,
    PartitionState,
    TopicMetadata,
)
from kafkacore.security.acl import (
    ACL_CHANGES_PATH,
    EXTENDED_ACL_CHANGES_PATH,
    AccessControlEntry,
    ResourcePattern,
    zk_acl_path,
)
from kafkacore.zk.admin import AdminZkClient, new_topic_id
from kafkacore.zk.client import KafkaZkClient
from kafkacore.zk.data import TopicAssignment

__all__ = ["LeaderView", "ZooKeeperMetadataStore"]

logger = logging.getLogger("kafkacore.metadata")

_T = TypeVar("_T")

# Kafka's ConfigType names for the entities a broker follows.
_TOPICS, _BROKERS = "topics", "brokers"
_QUOTA_TYPES = ("users", "clients", "ips")
_GROUPS = "groups"  # kafkacore's: Kafka keeps group configs in KRaft metadata only
# How long a blocking call waits for ZooKeeper before giving up.
_CALL_TIMEOUT_S = 30.0
# Kafka's AclAuthorizer: at most 10 tries of a versioned ACL update; notifications are
# purged 15 minutes after their creation (ZkNodeChangeNotificationListener's default).
_ACL_UPDATE_TRIES = 10
_ACL_CHANGE_EXPIRATION_S = 15 * 60.0
_ACL_CHANGE_ROOTS = (ACL_CHANGES_PATH, EXTENDED_ACL_CHANGES_PATH)


class LeaderView(Protocol):
    """Where the store sees whether a topic it created has leaders (the metadata cache,
    fed by the controller's UpdateMetadata)."""

    def topic(self, name: str) -> TopicMetadata | None: ...


class ZooKeeperMetadataStore:
    def __init__(
        self,
        zk: KafkaZkClient,
        loop: asyncio.AbstractEventLoop,
        node_id: int,
        leaders: LeaderView,
        *,
        create_wait_s: float = _CALL_TIMEOUT_S,
    ) -> None:
        self._zk = zk
        self._admin = AdminZkClient(zk)
        self._loop = loop
        self._node_id = node_id
        self._leaders = leaders
        self._create_wait_s = create_wait_s
        self._lock = threading.Lock()
        self._cluster_id: str | None = None
        self._topic_configs: dict[str, dict[str, str]] = {}
        self._broker_configs: dict[str, dict[str, str]] = {}
        self._quota_configs: dict[str, dict[str, str]] = {}  # by entity path
        self._group_configs: dict[str, dict[str, str]] = {}
        self._listeners: list[MetadataListener] = []
        self._seen_changes: set[str] = set()
        self._watching = False
        self._pid_block: tuple[int, int] | None = None  # (next, last) of this broker's block
        self._acls: dict[ResourcePattern, frozenset[AccessControlEntry]] = {}
        self._seen_acl_changes: dict[str, set[str]] = {root: set() for root in _ACL_CHANGE_ROOTS}
        self._acl_tasks: set[asyncio.Task[None]] = set()

    # -- start-up (on the event loop) -------------------------------------------------------

    async def start(self, proposed_cluster_id: str) -> str:
        """Create or read ``/cluster/id``, load the topic and broker configs and start
        following the config change notifications; the cluster id."""
        cluster_id = await self._zk.get_or_create_cluster_id(proposed_cluster_id)
        self._cluster_id = cluster_id
        # the notifications present now are already reflected in the configs read next
        self._seen_changes = set(await self._zk.get_config_changes())
        topics = await self._zk.get_all_topics()
        topic_configs = {t: await self._zk.get_entity_config(_TOPICS, t) for t in topics}
        broker_configs = {
            e: await self._zk.get_entity_config(_BROKERS, e)
            for e in (str(self._node_id), "<default>")
        }
        quota_configs = {}
        for entity_type in _QUOTA_TYPES:
            for name in await self._zk.get_entity_names(entity_type):
                quota_configs[f"{entity_type}/{name}"] = await self._zk.get_entity_config(
                    entity_type, name
                )
        group_configs = {
            name: await self._zk.get_entity_config(_GROUPS, name)
            for name in await self._zk.get_entity_names(_GROUPS)
        }
        with self._lock:
            self._topic_configs = {t: c for t, c in topic_configs.items() if c}
            self._broker_configs = {e: c for e, c in broker_configs.items() if c}
            self._quota_configs = {p: c for p, c in quota_configs.items() if c}
            self._group_configs = {g: c for g, c in group_configs.items() if c}
        self._watching = True
        await self._follow_config_changes()
        await self._load_acls()
        zk = self._zk
        if hasattr(zk, "add_session_listener"):
            zk.add_session_listener(self._on_session_state)
        return cluster_id

    def topic_configs(self) -> dict[str, dict[str, str]]:
        """Every topic's config overrides known now."""
        with self._lock:
            return {t: dict(c) for t, c in self._topic_configs.items()}

    async def load_topic_config(self, name: str) -> None:
        """Read ``/config/topics/<name>`` and tell the listeners (a topic created
        elsewhere, whose config was written without a change notification)."""
        configs = await self._zk.get_entity_config(_TOPICS, name)
        self._apply_config(_TOPICS, name, configs)

    def stop(self) -> None:
        self._watching = False
        for task in list(self._acl_tasks):
            task.cancel()

    async def _follow_config_changes(self) -> None:
        if not self._watching:
            return
        changes = await self._zk.get_config_changes(watch=self._on_config_changes_watch)
        for name in sorted(changes):
            if name in self._seen_changes:
                continue
            self._seen_changes.add(name)
            entity_path = await self._zk.get_config_change(name)
            if entity_path is None:
                continue
            entity_type, _, entity = entity_path.partition("/")
            if entity_type not in (_TOPICS, _BROKERS, _GROUPS, *_QUOTA_TYPES):
                continue
            configs = await self._zk.get_entity_config(entity_type, entity)
            self._apply_config(entity_type, entity, configs)
        self._seen_changes &= set(changes)

    def _on_config_changes_watch(self) -> None:
        # called on the loop by the client: re-read (and re-arm) in a task
        self._loop.create_task(self._follow_config_changes())

    def _apply_config(self, entity_type: str, entity: str, configs: Mapping[str, str]) -> None:
        if entity_type in _QUOTA_TYPES:
            self._apply_quota_config(f"{entity_type}/{entity}", configs)
            return
        if entity_type == _GROUPS:
            self._apply_group_config(entity, configs)
            return
        with self._lock:
            target = self._topic_configs if entity_type == _TOPICS else self._broker_configs
            if configs:
                target[entity] = dict(configs)
            else:
                target.pop(entity, None)
            listeners = list(self._listeners)
        for listener in listeners:
            if entity_type == _TOPICS:
                listener.on_topic_configs_changed(entity, dict(configs))
            else:
                listener.on_broker_configs_changed(_store_entity(entity), dict(configs))

    def _apply_group_config(self, group: str, configs: Mapping[str, str]) -> None:
        with self._lock:
            if configs:
                self._group_configs[group] = dict(configs)
            else:
                self._group_configs.pop(group, None)
            listeners = list(self._listeners)
        for listener in listeners:
            listener.on_group_configs_changed(group, dict(configs))

    def _apply_quota_config(self, path: str, configs: Mapping[str, str]) -> None:
        with self._lock:
            if configs:
                self._quota_configs[path] = dict(configs)
            else:
                self._quota_configs.pop(path, None)
            listeners = list(self._listeners)
        for listener in listeners:
            listener.on_quota_configs_changed(path, dict(configs))

    # -- ACLs: load and follow (on the event loop) -----------------------------------------

    async def _load_acls(self) -> None:
        """Kafka's ``AclAuthorizer.loadCache``: every ACL znode; then follow the change
        notifications (those present now are already reflected in what was read)."""
        await self._zk.create_acl_paths()
        for root in _ACL_CHANGE_ROOTS:
            self._seen_acl_changes[root] = set(await self._zk.get_acl_changes(root))
        acls = {}
        for pattern in await self._zk.get_acl_patterns():
            entries, _version = await self._zk.get_acls(pattern)
            if entries:
                acls[pattern] = entries
        with self._lock:
            self._acls = acls
        for root in _ACL_CHANGE_ROOTS:
            await self._follow_acl_changes(root)

    async def _follow_acl_changes(self, root: str) -> None:
        if not self._watching:
            return

        def on_watch() -> None:  # on the loop: re-read (and re-arm) in a task
            self._spawn(self._follow_acl_changes(root))

        changes = await self._zk.get_acl_changes(root, watch=on_watch)
        seen = self._seen_acl_changes[root]
        now = time.time()
        for name in changes:
            if name in seen:
                continue
            seen.add(name)
            found = await self._zk.get_acl_change(root, name)
            if found is None:
                continue
            pattern, created = found
            try:
                entries, _version = await self._zk.get_acls(pattern)
            except Exception:
                logger.exception("Could not read the ACLs of %s", pattern)
                continue
            self._apply_acls(pattern, entries)
            if now - created > _ACL_CHANGE_EXPIRATION_S:
                await self._zk.delete_acl_change(root, name)
        self._seen_acl_changes[root] = seen & set(changes)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = self._loop.create_task(coro)
        self._acl_tasks.add(task)
        task.add_done_callback(self._acl_tasks.discard)

    def _on_session_state(self, state: str) -> None:
        # a new session has no watches: catch up with what was missed and re-arm
        if state == "CONNECTED" and self._watching:
            for root in _ACL_CHANGE_ROOTS:
                self._spawn(self._follow_acl_changes(root))

    def _apply_acls(self, pattern: ResourcePattern, entries: frozenset[AccessControlEntry]) -> None:
        with self._lock:
            if self._acls.get(pattern, frozenset()) == entries:
                return
            if entries:
                self._acls[pattern] = entries
            else:
                self._acls.pop(pattern, None)
            listeners = list(self._listeners)
        for listener in listeners:
            listener.on_acls_changed(pattern, entries)

    def acls(self) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
        with self._lock:
            return dict(self._acls)

    def update_acls(
        self, pattern: ResourcePattern, update: AclUpdate
    ) -> tuple[frozenset[AccessControlEntry], frozenset[AccessControlEntry]]:
        """Kafka's ``AclAuthorizer.updateResourceAcls``: read the znode and its version,
        apply ``update``, write it back if the version is unchanged (create it, or delete
        it when no ACL is left), else retry; then the change notification."""
        zk_acl_path(pattern)  # InvalidAclError for what ZooKeeper cannot hold ('/')
        return self._call(self._update_acls(pattern, update))

    async def _update_acls(
        self, pattern: ResourcePattern, update: AclUpdate
    ) -> tuple[frozenset[AccessControlEntry], frozenset[AccessControlEntry]]:
        for _ in range(_ACL_UPDATE_TRIES):
            before, version = await self._zk.get_acls(pattern)
            after = frozenset(update(before))
            if after == before:
                self._apply_acls(pattern, after)
                return before, after
            for entry in after:
                entry.validate()
            if await self._zk.conditional_set_acls(pattern, after, version):
                await self._zk.create_acl_change_notification(pattern)
                self._apply_acls(pattern, after)
                return before, after
            await asyncio.sleep(random.uniform(0.0, 0.05))
        raise RuntimeError(
            f"Failed to update ACLs for {pattern} after trying a maximum of "
            f"{_ACL_UPDATE_TRIES} times"
        )

    # -- blocking bridge -------------------------------------------------------------------

    def _call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            coro.close()
            raise RuntimeError("ZooKeeperMetadataStore: blocking call on the event loop")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(_CALL_TIMEOUT_S)

    # -- MetadataStore -----------------------------------------------------------------------

    @property
    def cluster_id(self) -> str | None:
        return self._cluster_id

    def set_cluster_id(self, cluster_id: str) -> None:
        if self._cluster_id is not None and self._cluster_id != cluster_id:
            raise ValueError(
                f"The Cluster ID {cluster_id} doesn't match stored clusterId "
                f"Some({self._cluster_id}) in meta.properties"
            )
        self._cluster_id = cluster_id

    def topics(self) -> list[TopicMetadata]:
        names = self._call(self._zk.get_all_topics())
        found = [self.topic(name) for name in sorted(names)]
        return [t for t in found if t is not None]

    def topic(self, name: str) -> TopicMetadata | None:
        return self._call(self._read_topic(name))

    async def _read_topic(self, name: str) -> TopicMetadata | None:
        assignment = await self._zk.get_topic_assignment(name)
        if assignment is None:
            return None
        states = await self._zk.get_partition_states(name)
        partitions = []
        for index in sorted(assignment.partitions):
            replicas = tuple(assignment.partitions[index])
            found = states.get(index)
            if found is None:
                partitions.append(PartitionState(replicas, -1, -1, (), -1))
            else:
                state, version = found
                partitions.append(
                    PartitionState(replicas, state.leader, state.leader_epoch, state.isr, version)
                )
        with self._lock:
            configs = dict(self._topic_configs.get(name, {}))
        return TopicMetadata(
            name, assignment.topic_id or uuid.UUID(int=0), tuple(partitions), configs
        )

    def create_topic(
        self,
        name: str,
        assignment: Sequence[Sequence[int]],
        configs: Mapping[str, str] | None = None,
        topic_id: uuid.UUID | None = None,
    ) -> TopicMetadata:
        """Kafka's ``ZkAdminManager.createTopics``: ``AdminZkClient``'s recipe (the config
        node, then the assignment, which the controller's topic watch acts on); then wait,
        as Kafka's ``DelayedCreatePartitions`` does, until every partition has a leader in
        this broker's metadata. ``KeyError`` if the topic exists (nothing is written)."""
        topic_id = topic_id or new_topic_id()
        overrides = dict(configs or {})
        partitions = {i: tuple(r) for i, r in enumerate(assignment)}
        self._call(self._create(name, overrides, partitions, topic_id))
        self._wait_for_leaders(name, len(assignment))
        return TopicMetadata(
            name,
            topic_id,
            tuple(PartitionState.initial(r) for r in assignment),
            overrides,
        )

    async def _create(
        self,
        name: str,
        configs: Mapping[str, str],
        partitions: Mapping[int, tuple[int, ...]],
        topic_id: uuid.UUID,
    ) -> None:
        if await self._zk.get_topic_assignment(name) is not None:
            raise KeyError(name)  # before the recipe, which would write the config first
        await self._admin.create_topic_with_assignment(
            name, configs, partitions, validate=False, topic_id=topic_id
        )

    def _wait_for_leaders(self, name: str, partitions: int) -> None:
        deadline = time.monotonic() + self._create_wait_s
        while time.monotonic() < deadline:
            topic = self._leaders.topic(name)
            if (
                topic is not None
                and topic.partition_count >= partitions
                and all(p.leader >= 0 for p in topic.partitions[:partitions])
            ):
                return
            time.sleep(0.02)
        logger.warning("Topic %s: no leaders after %.0f s", name, self._create_wait_s)

    def set_partitions(self, name: str, assignment: Sequence[Sequence[int]]) -> TopicMetadata:
        """Kafka's ``AdminZkClient.addPartitions``: the topic node rewritten with the
        extra partitions (existing ones unchanged), which the controller acts on."""
        self._call(self._set_partitions(name, assignment))
        self._wait_for_leaders(name, len(assignment))
        topic = self.topic(name)
        if topic is None:
            raise KeyError(name)
        return topic

    async def _set_partitions(self, name: str, assignment: Sequence[Sequence[int]]) -> None:
        current = await self._zk.get_topic_assignment(name)
        if current is None:
            raise KeyError(name)
        partitions = dict(current.partitions)
        for index, replicas in enumerate(assignment):
            partitions.setdefault(index, tuple(replicas))
        updated = TopicAssignment(
            topic=name,
            partitions=partitions,
            adding=dict(current.adding),
            removing=dict(current.removing),
            topic_id=current.topic_id,
        )
        await self._zk.set_topic_assignment(updated, controller_epoch_zk_version=None)

    def set_partition_state(self, name: str, partition: int, state: PartitionState) -> None:
        raise NotImplementedError("In ZooKeeper mode only the controller writes partition states")

    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> None:
        """Kafka's ``changeTopicConfig``: ``/config/topics/<t>`` and a change
        notification, which every broker (this one included) applies."""
        self._call(self._zk.set_entity_config(_TOPICS, name, configs))
        self._apply_config(_TOPICS, name, configs)

    def delete_topic(self, name: str) -> TopicMetadata | None:
        """Kafka's ``AdminZkClient.deleteTopic``: mark it under ``/admin/delete_topics``;
        the controller's deletion state machine does the rest."""
        topic = self.topic(name)
        if topic is None:
            return None
        self._call(self._zk.mark_topic_for_deletion(name))
        return topic

    def broker_configs(self, entity: str) -> dict[str, str]:
        with self._lock:
            return dict(self._broker_configs.get(_zk_entity(entity), {}))

    def set_broker_configs(self, entity: str, configs: Mapping[str, str]) -> None:
        zk_entity = _zk_entity(entity)
        self._call(self._zk.set_entity_config(_BROKERS, zk_entity, configs))
        self._apply_config(_BROKERS, zk_entity, configs)

    def quota_configs(self) -> dict[str, dict[str, str]]:
        """Every client quota entity's configs, by entity path (``users/<u>``,
        ``clients/<c>``, ``users/<u>/clients/<c>``, ``ips/<ip>``; names sanitized)."""
        with self._lock:
            return {p: dict(c) for p, c in self._quota_configs.items()}

    def set_quota_configs(self, path: str, configs: Mapping[str, str]) -> None:
        """Kafka's ``AdminZkClient.changeConfigs`` for a quota entity: ``/config/<path>``
        and a change notification with ``entity_path`` ``<path>``."""
        entity_type, _, name = path.partition("/")
        self._call(self._zk.set_entity_config(entity_type, name, configs))
        self._apply_quota_config(path, configs)

    def group_configs(self) -> dict[str, dict[str, str]]:
        with self._lock:
            return {g: dict(c) for g, c in self._group_configs.items()}

    def set_group_configs(self, group: str, configs: Mapping[str, str]) -> None:
        """``/config/groups/<group>`` and a change notification ``groups/<group>`` (a
        kafkacore path: Kafka keeps group configs in its KRaft metadata)."""
        self._call(self._zk.set_entity_config(_GROUPS, group, configs))
        self._apply_group_config(group, configs)

    def allocate_producer_id(self) -> int:
        """One id from this broker's current block of ``/latest_producer_id_block``
        (a new block of 1000 claimed with a compare-and-set when it runs out)."""
        with self._lock:
            block = self._pid_block
            if block is not None and block[0] <= block[1]:
                self._pid_block = (block[0] + 1, block[1])
                return block[0]
        start, end = self._call(self._zk.allocate_producer_id_block(self._node_id))
        with self._lock:
            self._pid_block = (start + 1, end)
        return start

    def add_listener(self, listener: MetadataListener) -> None:
        with self._lock:
            self._listeners.append(listener)


def _zk_entity(entity: str) -> str:
    """The store's ``"default"`` broker entity is ZooKeeper's ``<default>``."""
    return "<default>" if entity == "default" else entity


def _store_entity(entity: str) -> str:
    return "default" if entity == "<default>" else entity
