"""``KafkaZkClient``: the reads and writes a Kafka broker and controller make in
ZooKeeper (Kafka's ``kafka.zk.KafkaZkClient``), as an asyncio facade over kazoo.

Every call sends kazoo's ``*_async`` request and awaits its result, which kazoo's thread
hands to the event loop with ``loop.call_soon_threadsafe``: nothing here blocks the loop.
Watches and session-state listeners are re-posted onto the loop the same way, so their
callbacks run on the loop thread (they should only enqueue work).

Mechanics copied from Kafka:

* **checked ephemeral create** (``register_broker``): ``multi(create(path, EPHEMERAL),
  setData(path, data, version 0))``; on NODEEXISTS the node is accepted if this session
  owns it, re-created if an earlier session of this client owns it (ZOOKEEPER-2985), and
  refused otherwise;
* **controller election**: ``multi(create /controller EPHEMERAL, setData
  /controller_epoch epoch+1 at its zkVersion)``;
* **controller fence**: every controller write is ``multi(check(/controller_epoch,
  expected zkVersion), op)``; BADVERSION on the check raises :class:`ControllerMovedError`;
* **partition state CAS** on the state znode's zkVersion (the partition epoch).

Watches are one-shot, like ZooKeeper's: call the getter again to re-arm. A watch is not
called for session events; after a ``"LOST"`` session state the watches are gone and the
owner re-reads and re-arms them (Kafka does the same after re-registration).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from kazoo.client import KazooClient  # type: ignore[import-untyped]
from kazoo.exceptions import (  # type: ignore[import-untyped]
    BadVersionError as KazooBadVersion,
)
from kazoo.exceptions import (
    ConnectionClosedError,
    ConnectionLoss,
    NotEmptyError,
    OperationTimeoutError,
    RolledBackError,
    RuntimeInconsistency,
    SessionExpiredError,
)
from kazoo.exceptions import NodeExistsError as KazooNodeExists
from kazoo.exceptions import NoNodeError as KazooNoNode
from kazoo.protocol.states import EventType  # type: ignore[import-untyped]

from kafkacore.features import FinalizedFeatures
from kafkacore.security.acl import (
    ACL_CHANGE_PREFIX,
    ACL_CHANGES_PATH,
    EXTENDED_ACL_CHANGES_PATH,
    EXTENDED_ACL_PATH,
    LITERAL_ACL_PATH,
    AccessControlEntry,
    PatternType,
    ResourcePattern,
    ResourceType,
    decode_acl_change,
    decode_acl_znode,
    decode_extended_acl_change,
    encode_acl_change,
    encode_acl_znode,
    zk_acl_path,
    zk_change_root,
)
from kafkacore.zk.data import (
    BALANCER_STATE_PATH,
    BROKER_IDS_PATH,
    CLUSTER_ID_PATH,
    CONFIG_CHANGE_PREFIX,
    CONFIG_CHANGES_PATH,
    CONFIG_PATH,
    CONTROLLER_EPOCH_PATH,
    CONTROLLER_PATH,
    DELETE_TOPICS_PATH,
    FEATURE_PATH,
    FEATURE_ZNODE_ENABLED,
    INITIAL_CONTROLLER_EPOCH,
    ISR_CHANGE_NOTIFICATION_PATH,
    ISR_CHANGE_PREFIX,
    LOG_DIR_EVENT_NOTIFICATION_PATH,
    LOG_DIR_EVENT_PREFIX,
    PERSISTENT_ZK_PATHS,
    PREFERRED_REPLICA_ELECTION_PATH,
    PRODUCER_ID_BLOCK_PATH,
    PRODUCER_ID_BLOCK_SIZE,
    REASSIGN_PARTITIONS_PATH,
    TOPICS_PATH,
    BrokerRegistration,
    ClusterId,
    ConfigChangeNotification,
    ControllerRegistration,
    EntityConfig,
    FeatureZNode,
    IsrChangeNotification,
    LeaderIsrState,
    LogDirEventNotification,
    PartitionReassignment,
    PreferredReplicaElection,
    ProducerIdBlock,
    TopicAssignment,
    broker_path,
    decode_controller_epoch,
    delete_topic_path,
    encode_controller_epoch,
    entity_config_path,
    partition_path,
    partition_state_path,
    partitions_path,
    topic_path,
)
from kafkacore.zk.errors import (
    BadVersionError,
    ControllerMovedError,
    NodeExistsError,
    NoNodeError,
    TopicAlreadyMarkedForDeletion,
    TopicExistsError,
    ZkConnectionError,
)

__all__ = [
    "ControllerMovedError",
    "KafkaZkClient",
    "Watch",
    "ZnodeStat",
]

log = logging.getLogger(__name__)

T = TypeVar("T")
Watch = Callable[[], None]
ZnodeStat = Any  # kazoo.protocol.states.ZnodeStat (czxid, mzxid, version, ephemeralOwner, ...)

# Multi-op results that only say "rolled back because another op failed".
_ROLLED_BACK = (RolledBackError, RuntimeInconsistency)
# The resource types ACLs are stored for (Kafka's AclEntry.ResourceTypes: all but ANY/UNKNOWN).
ACL_RESOURCE_TYPES = tuple(
    t for t in ResourceType if t not in (ResourceType.ANY, ResourceType.UNKNOWN)
)
_PREFIXED_ACL_PATH = f"{EXTENDED_ACL_PATH}/{PatternType.PREFIXED.name.lower()}"
# Errors after which Kafka's retryRequestUntilConnected waits for a connection and resends.
_RETRIABLE = (ConnectionLoss, SessionExpiredError, OperationTimeoutError)


def _split_connect(connect: str) -> tuple[str, str]:
    """``"h:p,h2:p2/chroot"`` -> (``"h:p,h2:p2"``, ``"/chroot"`` or ``""``)."""
    hosts, slash, chroot = connect.partition("/")
    chroot = ("/" + chroot).rstrip("/") if slash else ""
    return hosts, chroot


def _op_failure(results: list[Any]) -> tuple[int, BaseException] | None:
    """The failing op of a multi's results (index and error), or None if all succeeded."""
    for index, result in enumerate(results):
        if isinstance(result, BaseException) and not isinstance(result, _ROLLED_BACK):
            return index, result
    for index, result in enumerate(results):
        if isinstance(result, BaseException):
            return index, result
    return None


class KafkaZkClient:
    """An asyncio facade over one kazoo session (see the module docstring)."""

    def __init__(
        self,
        zk: Any,
        loop: asyncio.AbstractEventLoop,
        *,
        session_timeout_ms: int,
        connection_timeout_ms: int,
    ) -> None:
        self._zk = zk
        self._loop = loop
        self._session_timeout_ms = session_timeout_ms
        self._connection_timeout_ms = connection_timeout_ms
        self._closed = False
        self._listeners: list[Callable[[str], None]] = []
        # The session that last created a checked ephemeral node (Kafka's
        # currentZooKeeperSessionId, the KAFKA-7165 work-around).
        self._ephemeral_session_id: int | None = None
        zk.add_listener(self._on_state_thread)

    # --- life cycle ------------------------------------------------------------------------

    @classmethod
    async def connect(
        cls,
        connect: str,
        *,
        session_timeout_ms: int = 18000,
        connection_timeout_ms: int = 18000,
    ) -> KafkaZkClient:
        """Open a session to ``"host:port[,host:port][/chroot]"``; create the chroot if it
        is missing, then Kafka's persistent top-level paths."""
        loop = asyncio.get_running_loop()
        hosts, chroot = _split_connect(connect)
        timeout_s = connection_timeout_ms / 1000
        if chroot:
            bootstrap = KazooClient(hosts=hosts, timeout=session_timeout_ms / 1000)
            try:
                await asyncio.to_thread(bootstrap.start, timeout_s)
                await _bridge(loop, bootstrap.ensure_path_async(chroot))
            except Exception as exc:
                raise ZkConnectionError(f"cannot reach ZooKeeper at {hosts}: {exc}") from exc
            finally:
                await asyncio.to_thread(_stop_quietly, bootstrap)
        zk = KazooClient(
            hosts=connect,
            timeout=session_timeout_ms / 1000,
            # Keep reconnecting (a new session after expiry), like Kafka's ZooKeeperClient.
            connection_retry={"max_tries": -1, "delay": 0.1, "backoff": 2, "max_delay": 2},
        )
        try:
            await asyncio.to_thread(zk.start, timeout_s)
        except Exception as exc:
            await asyncio.to_thread(_stop_quietly, zk)
            raise ZkConnectionError(f"cannot reach ZooKeeper at {connect}: {exc}") from exc
        client = cls(
            zk,
            loop,
            session_timeout_ms=session_timeout_ms,
            connection_timeout_ms=connection_timeout_ms,
        )
        try:
            await client.create_top_level_paths()
        except BaseException:
            await client.close()
            raise
        return client

    async def close(self) -> None:
        """Close the session (its ephemeral nodes go at once) and the connection."""
        if self._closed:
            return
        self._closed = True
        await asyncio.to_thread(_stop_quietly, self._zk)

    async def __aenter__(self) -> KafkaZkClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def session_id(self) -> int:
        """The current ZooKeeper session id (0 while there is none)."""
        client_id = self._zk.client_id
        return int(client_id[0]) if client_id else 0

    @property
    def closed(self) -> bool:
        return self._closed

    def add_session_listener(self, cb: Callable[[str], None]) -> None:
        """``cb("LOST" | "SUSPENDED" | "CONNECTED")`` on the event loop at each kazoo session
        state change. ``LOST`` means the session expired (ephemeral nodes and watches are
        gone); kazoo then opens a new session and reports ``CONNECTED``."""
        self._listeners.append(cb)

    def _on_state_thread(self, state: str) -> None:
        # kazoo's connection thread: never block here, hand over to the loop.
        with contextlib.suppress(RuntimeError):  # the loop is closed
            self._loop.call_soon_threadsafe(self._on_state, str(state))

    def _on_state(self, state: str) -> None:
        if self._closed:
            return
        for cb in list(self._listeners):
            try:
                cb(state)
            except Exception:
                log.exception("ZooKeeper session listener %r failed", cb)

    # --- plumbing --------------------------------------------------------------------------

    def _watcher(self, watch: Watch | None) -> Callable[[Any], None] | None:
        """A kazoo watch function that posts ``watch()`` onto the loop for node events
        (not for the session events kazoo also delivers when it drops its watches)."""
        if watch is None:
            return None
        loop = self._loop

        def on_event(event: Any) -> None:
            if event is not None and event.type == EventType.NONE:
                return
            with contextlib.suppress(RuntimeError):  # the loop is closed
                loop.call_soon_threadsafe(watch)

        return on_event

    async def _call(self, request: Callable[[], Any]) -> Any:
        """Send ``request()`` (a kazoo ``*_async`` call) and await its result; on connection
        loss wait for the connection to come back and resend, as Kafka's
        ``retryRequestUntilConnected`` does, for at most the session + connection timeouts."""
        deadline = (
            time.monotonic() + (self._session_timeout_ms + self._connection_timeout_ms) / 1000
        )
        while True:
            if self._closed:
                raise ZkConnectionError("the ZooKeeper client is closed")
            try:
                return await _bridge(self._loop, request())
            except ConnectionClosedError as exc:
                raise ZkConnectionError("the ZooKeeper client is closed") from exc
            except _RETRIABLE as exc:
                if not await self._wait_connected(deadline):
                    raise ZkConnectionError(f"ZooKeeper unreachable: {exc!r}") from exc

    async def _wait_connected(self, deadline: float) -> bool:
        """Wait until kazoo is connected again (False at the deadline or on close). Polls
        kazoo's own state: the loop learns of state changes a little late, and a stale
        "connected" would resend into the same dead connection."""
        delay = 0.01
        while not self._closed:
            if self._zk.connected:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            await asyncio.sleep(min(delay, remaining))
            delay = min(delay * 2, 0.1)
        return False

    async def _get(self, path: str, watch: Watch | None = None) -> tuple[bytes, ZnodeStat] | None:
        try:
            data, stat = await self._call(lambda: self._zk.get_async(path, self._watcher(watch)))
        except KazooNoNode:
            return None
        return (data or b""), stat

    async def _exists(self, path: str, watch: Watch | None = None) -> ZnodeStat | None:
        return await self._call(lambda: self._zk.exists_async(path, self._watcher(watch)))

    async def _children(self, path: str, watch: Watch | None = None) -> list[str] | None:
        try:
            children = await self._call(
                lambda: self._zk.get_children_async(path, self._watcher(watch))
            )
        except KazooNoNode:
            return None
        return list(children)

    async def _create(
        self,
        path: str,
        data: bytes = b"",
        *,
        ephemeral: bool = False,
        sequence: bool = False,
        makepath: bool = False,
    ) -> str:
        return str(
            await self._call(
                lambda: self._zk.create_async(
                    path, data, ephemeral=ephemeral, sequence=sequence, makepath=makepath
                )
            )
        )

    async def _multi(self, ops: Iterable[tuple[str, tuple[Any, ...], dict[str, Any]]]) -> list[Any]:
        ops = list(ops)

        def request() -> Any:
            tx = self._zk.transaction()
            for name, args, kwargs in ops:
                getattr(tx, name)(*args, **kwargs)
            return tx.commit_async()

        return list(await self._call(request))

    async def _fenced(
        self, epoch_zk_version: int, ops: Iterable[tuple[str, tuple[Any, ...], dict[str, Any]]]
    ) -> list[Any]:
        """``multi(check(/controller_epoch, epoch_zk_version), *ops)``: the results of
        ``ops``. A failed check raises :class:`ControllerMovedError`; a failed op raises
        its kazoo error (the others were rolled back)."""
        results = await self._multi(
            [("check", (CONTROLLER_EPOCH_PATH, epoch_zk_version), {}), *ops]
        )
        failure = _op_failure(results)
        if failure is not None:
            index, error = failure
            if index == 0:
                raise ControllerMovedError(
                    f"controller epoch zkVersion is no longer {epoch_zk_version} "
                    f"({type(error).__name__}): another controller was elected"
                )
            raise error
        return results[1:]

    async def create_top_level_paths(self) -> None:
        """Kafka's ``ZkData.PersistentZkPaths`` (each created empty when missing)."""
        await asyncio.gather(*(self._ensure_path(p) for p in PERSISTENT_ZK_PATHS))

    async def _ensure_path(self, path: str) -> None:
        with contextlib.suppress(KazooNodeExists):
            await self._create(path, b"", makepath=True)

    # --- cluster id and brokers -------------------------------------------------------------

    async def get_cluster_id(self) -> str | None:
        got = await self._get(CLUSTER_ID_PATH)
        return ClusterId.decode(got[0]).id if got else None

    async def get_or_create_cluster_id(self, proposed: str) -> str:
        """Create ``/cluster/id`` with ``proposed``, or return the id already there."""
        try:
            await self._create(CLUSTER_ID_PATH, ClusterId(proposed).encode(), makepath=True)
            return proposed
        except KazooNodeExists:
            existing = await self.get_cluster_id()
            if existing is None:
                raise NoNodeError(CLUSTER_ID_PATH) from None
            return existing

    async def register_broker(self, info: BrokerRegistration) -> int:
        """Register ``/brokers/ids/<id>`` (checked ephemeral create); returns the broker
        epoch, the znode's czxid. Raises :class:`NodeExistsError` if another live session
        holds the id."""
        stat = await self._checked_ephemeral_create(broker_path(info.id), info.encode())
        return int(stat.czxid)

    async def _checked_ephemeral_create(self, path: str, data: bytes) -> ZnodeStat:
        for _ in range(10):
            results = await self._multi(
                [
                    ("create", (path, b""), {"ephemeral": True}),
                    ("set_data", (path, data, 0), {}),
                ]
            )
            failure = _op_failure(results)
            if failure is None:
                self._ephemeral_session_id = self.session_id
                return results[1]
            _, error = failure
            if not isinstance(error, KazooNodeExists):
                raise error
            got = await self._get(path)
            if got is None:
                continue  # it went away meanwhile: create again
            _, stat = got
            owner = int(stat.ephemeralOwner)
            session = self.session_id
            if owner == session:
                self._ephemeral_session_id = session
                return stat
            if owner != 0 and owner == self._ephemeral_session_id:
                # Created by an earlier session of this very client and not (yet) removed
                # (ZOOKEEPER-2985): delete and create again with this session.
                with contextlib.suppress(KazooNoNode):
                    await self._call(lambda: self._zk.delete_async(path))
                continue
            raise NodeExistsError(path, f"owned by session 0x{owner:x}, not 0x{session:x}")
        raise NodeExistsError(path, "kept changing while registering")

    async def get_broker(self, broker_id: int) -> tuple[BrokerRegistration, int] | None:
        """One broker's registration and epoch (czxid), or None if not registered."""
        got = await self._get(broker_path(broker_id))
        if got is None:
            return None
        data, stat = got
        return BrokerRegistration.decode(data, broker_id), int(stat.czxid)

    async def get_all_brokers(self) -> dict[int, tuple[BrokerRegistration, int]]:
        """Every registered broker: id -> (registration, broker epoch = czxid)."""
        ids = await self.get_broker_ids()
        found = await asyncio.gather(*(self.get_broker(i) for i in ids))
        return {i: got for i, got in zip(ids, found, strict=False) if got is not None}

    async def get_broker_ids(self, watch: Watch | None = None) -> list[int]:
        """The registered broker ids, sorted; ``watch`` fires once when the set changes."""
        children = await self._children(BROKER_IDS_PATH, watch)
        return sorted(int(c) for c in children or ())

    # --- controller -------------------------------------------------------------------------

    async def get_controller_id(self, watch: Watch | None = None) -> int | None:
        """The broker id in ``/controller``, or None; ``watch`` (an exists watch, as Kafka
        registers it) fires once when ``/controller`` is created, changed or deleted."""
        if watch is not None:
            await self._exists(CONTROLLER_PATH, watch)
        got = await self._get(CONTROLLER_PATH)
        return ControllerRegistration.decode(got[0]).broker_id if got else None

    async def get_controller_epoch(self) -> tuple[int, int] | None:
        """``(epoch, zkVersion)`` of ``/controller_epoch``, or None if it does not exist."""
        got = await self._get(CONTROLLER_EPOCH_PATH)
        if got is None:
            return None
        data, stat = got
        return decode_controller_epoch(data), int(stat.version)

    async def _get_or_create_controller_epoch(self) -> tuple[int, int]:
        current = await self.get_controller_epoch()
        if current is not None:
            return current
        try:
            await self._create(
                CONTROLLER_EPOCH_PATH, encode_controller_epoch(INITIAL_CONTROLLER_EPOCH)
            )
            return INITIAL_CONTROLLER_EPOCH, 0
        except KazooNodeExists:
            current = await self.get_controller_epoch()
            if current is None:
                raise ControllerMovedError(f"{CONTROLLER_EPOCH_PATH} vanished") from None
            return current

    async def register_controller_and_increment_epoch(self, broker_id: int) -> tuple[int, int]:
        """Become controller: ``multi(create /controller EPHEMERAL, setData
        /controller_epoch epoch+1 at its zkVersion)``. Returns ``(new epoch, epoch
        zkVersion)``; raises :class:`ControllerMovedError` when another broker won."""
        epoch, epoch_zk_version = await self._get_or_create_controller_epoch()
        new_epoch = epoch + 1
        registration = ControllerRegistration(broker_id).encode()
        results = await self._multi(
            [
                ("create", (CONTROLLER_PATH, registration), {"ephemeral": True}),
                (
                    "set_data",
                    (CONTROLLER_EPOCH_PATH, encode_controller_epoch(new_epoch), epoch_zk_version),
                    {},
                ),
            ]
        )
        failure = _op_failure(results)
        if failure is None:
            return new_epoch, int(results[1].version)
        _, error = failure
        if not isinstance(error, (KazooNodeExists, KazooBadVersion)):
            raise error
        # The multi may have succeeded on an earlier attempt of a resent request: the
        # election still counts if /controller names us at exactly the new epoch.
        controller = await self.get_controller_id()
        if controller == broker_id:
            current = await self.get_controller_epoch()
            if current is not None and current[0] == new_epoch:
                return current
        raise ControllerMovedError(
            f"broker {broker_id} lost the controller election (controller: {controller})"
        )

    async def delete_controller(self, epoch_zk_version: int) -> None:
        """Delete ``/controller``, fenced on the epoch zkVersion (resignation)."""
        with contextlib.suppress(KazooNoNode):
            await self._fenced(epoch_zk_version, [("delete", (CONTROLLER_PATH,), {})])

    # --- topics -----------------------------------------------------------------------------

    async def get_all_topics(self, watch: Watch | None = None) -> list[str]:
        """The topics in ``/brokers/topics``, sorted; ``watch`` fires once on a change."""
        return sorted(await self._children(TOPICS_PATH, watch) or ())

    async def topic_exists(self, topic: str) -> bool:
        return await self._exists(topic_path(topic)) is not None

    async def get_topic_assignment(
        self, topic: str, watch: Watch | None = None
    ) -> TopicAssignment | None:
        """``/brokers/topics/<t>`` decoded, or None; ``watch`` (exists watch) fires once
        when the node is created, changed or deleted."""
        if watch is not None:
            await self._exists(topic_path(topic), watch)
        got = await self._get(topic_path(topic))
        return TopicAssignment.decode(got[0], topic) if got else None

    async def set_topic_assignment(
        self,
        a: TopicAssignment,
        *,
        controller_epoch_zk_version: int | None,
        expected_version: int = -1,
    ) -> None:
        """Overwrite ``/brokers/topics/<t>`` (fenced when ``controller_epoch_zk_version`` is
        given). Raises :class:`BadVersionError` / :class:`NoNodeError`."""
        path = topic_path(a.topic)
        try:
            if controller_epoch_zk_version is None:
                await self._call(lambda: self._zk.set_async(path, a.encode(), expected_version))
            else:
                await self._fenced(
                    controller_epoch_zk_version,
                    [("set_data", (path, a.encode(), expected_version), {})],
                )
        except KazooBadVersion:
            raise BadVersionError(path, expected_version) from None
        except KazooNoNode:
            raise NoNodeError(path) from None

    async def create_topic_assignment(self, a: TopicAssignment) -> None:
        """Create ``/brokers/topics/<t>`` (the admin path, not fenced); raises
        :class:`TopicExistsError`."""
        try:
            await self._create(topic_path(a.topic), a.encode(), makepath=True)
        except KazooNodeExists:
            raise TopicExistsError(a.topic) from None

    async def get_partition_states(self, topic: str) -> dict[int, tuple[LeaderIsrState, int]]:
        """partition -> (state, zkVersion = partition epoch), for partitions with a state."""
        children = await self._children(partitions_path(topic))
        if not children:
            return {}
        partitions = sorted(int(c) for c in children)
        found = await asyncio.gather(
            *(self._get(partition_state_path(topic, p)) for p in partitions)
        )
        return {
            p: (LeaderIsrState.decode(got[0]), int(got[1].version))
            for p, got in zip(partitions, found, strict=False)
            if got is not None
        }

    async def get_partition_state(
        self, topic: str, partition: int
    ) -> tuple[LeaderIsrState, int] | None:
        got = await self._get(partition_state_path(topic, partition))
        return (LeaderIsrState.decode(got[0]), int(got[1].version)) if got else None

    async def create_partition_states(
        self,
        topic: str,
        states: Mapping[int, LeaderIsrState],
        *,
        controller_epoch_zk_version: int,
    ) -> dict[int, int]:
        """Create ``…/partitions``, ``…/partitions/<p>`` (kept if there) and each
        ``…/partitions/<p>/state``, every write fenced. Returns partition -> zkVersion (0).
        Raises :class:`NodeExistsError` if a state existed (the others are created)."""
        v = controller_epoch_zk_version
        await self._fenced_create_if_missing(partitions_path(topic), v)
        await asyncio.gather(
            *(self._fenced_create_if_missing(partition_path(topic, p), v) for p in states)
        )

        async def create_state(p: int, state: LeaderIsrState) -> BaseException | None:
            try:
                await self._fenced(
                    v, [("create", (partition_state_path(topic, p), state.encode()), {})]
                )
            except KazooNodeExists:
                return NodeExistsError(partition_state_path(topic, p))
            return None

        errors = await asyncio.gather(*(create_state(p, s) for p, s in states.items()))
        for error in errors:
            if error is not None:
                raise error
        return dict.fromkeys(states, 0)

    async def _fenced_create_if_missing(self, path: str, epoch_zk_version: int) -> None:
        with contextlib.suppress(KazooNodeExists):
            await self._fenced(epoch_zk_version, [("create", (path, b""), {})])

    async def update_partition_state(
        self,
        topic: str,
        partition: int,
        state: LeaderIsrState,
        *,
        expected_version: int,
        controller_epoch_zk_version: int,
    ) -> int | None:
        """Compare-and-set ``…/<p>/state`` at ``expected_version`` (the partition epoch),
        fenced: the new zkVersion, or None on BADVERSION (re-read and retry)."""
        path = partition_state_path(topic, partition)
        try:
            results = await self._fenced(
                controller_epoch_zk_version,
                [("set_data", (path, state.encode(), expected_version), {})],
            )
        except KazooBadVersion:
            return None
        except KazooNoNode:
            raise NoNodeError(path) from None
        return int(results[0].version)

    async def delete_topic_nodes(self, topic: str, *, controller_epoch_zk_version: int) -> None:
        """Delete ``/brokers/topics/<t>`` (recursively), ``/config/topics/<t>`` and
        ``/admin/delete_topics/<t>``, each fenced; missing nodes are fine."""
        v = controller_epoch_zk_version
        await self._fenced_delete_recursive(topic_path(topic), v)
        for path in (entity_config_path("topics", topic), delete_topic_path(topic)):
            with contextlib.suppress(KazooNoNode):
                await self._fenced(v, [("delete", (path,), {})])

    async def _tree(self, path: str) -> list[str] | None:
        """``path`` and its descendants, deepest first, or None if ``path`` is missing."""
        children = await self._children(path)
        if children is None:
            return None
        subtrees = await asyncio.gather(*(self._tree(f"{path}/{c}") for c in children))
        out: list[str] = []
        for subtree in subtrees:
            out.extend(subtree or ())
        out.append(path)
        return out

    async def _fenced_delete_recursive(self, path: str, epoch_zk_version: int) -> None:
        for _ in range(10):
            tree = await self._tree(path)
            if tree is None:
                return
            try:
                await self._fenced(epoch_zk_version, [("delete", (p,), {}) for p in tree])
                return
            except (KazooNoNode, NotEmptyError):
                continue  # the tree changed under us: walk it again
        raise NotEmptyError(path)

    async def get_topics_to_delete(self, watch: Watch | None = None) -> list[str]:
        """The topics under ``/admin/delete_topics``; ``watch`` fires once on a change."""
        return sorted(await self._children(DELETE_TOPICS_PATH, watch) or ())

    async def mark_topic_for_deletion(self, topic: str) -> None:
        """Create ``/admin/delete_topics/<t>``; raises
        :class:`TopicAlreadyMarkedForDeletion`."""
        try:
            await self._create(delete_topic_path(topic), b"", makepath=True)
        except KazooNodeExists:
            raise TopicAlreadyMarkedForDeletion(topic) from None

    async def delete_topic_deletion_node(
        self, topic: str, *, controller_epoch_zk_version: int
    ) -> None:
        with contextlib.suppress(KazooNoNode):
            await self._fenced(
                controller_epoch_zk_version, [("delete", (delete_topic_path(topic),), {})]
            )

    # --- configs ----------------------------------------------------------------------------

    async def get_entity_config(self, entity_type: str, name: str) -> dict[str, str]:
        """``/config/<type>/<name>``'s overrides (``{}`` when there are none). ``name`` is
        Kafka's sanitized entity name (``<default>``, URL-encoded user names)."""
        got = await self._get(entity_config_path(entity_type, name))
        return EntityConfig.decode(got[0]).config if got else {}

    async def get_entity_names(self, entity_type: str) -> list[str]:
        """The sanitized names under ``/config/<type>`` (for ``users`` also each
        ``<user>/clients/<client>`` below a user: Kafka's user and client-id quotas)."""
        names = sorted(await self._children(f"{CONFIG_PATH}/{entity_type}") or ())
        if entity_type != "users":
            return names
        out = []
        for name in names:
            out.append(name)
            below = f"{CONFIG_PATH}/users/{name}/clients"
            out.extend(f"{name}/clients/{c}" for c in sorted(await self._children(below) or ()))
        return out

    async def set_entity_config(
        self, entity_type: str, name: str, configs: Mapping[str, str], *, notify: bool = True
    ) -> None:
        """Write ``/config/<type>/<name>`` (created when missing), then (``notify``) the
        change notification ``/config/changes/config_change_<seq>`` brokers watch. A new
        topic's config is written without one (``AdminZkClient.createTopicWithAssignment``
        calls ``setOrCreateEntityConfigs`` directly)."""
        path = entity_config_path(entity_type, name)
        data = EntityConfig(dict(configs)).encode()
        for _ in range(10):
            try:
                await self._call(lambda: self._zk.set_async(path, data))
                break
            except KazooNoNode:
                try:
                    await self._create(path, data, makepath=True)
                    break
                except KazooNodeExists:
                    continue
        if not notify:
            return
        await self._create(
            f"{CONFIG_CHANGES_PATH}/{CONFIG_CHANGE_PREFIX}",
            ConfigChangeNotification(f"{entity_type}/{name}").encode(),
            sequence=True,
            makepath=True,
        )

    async def get_config_changes(self, watch: Watch | None = None) -> list[str]:
        """The ``config_change_<seq>`` node names, in sequence order."""
        return sorted(await self._children(CONFIG_CHANGES_PATH, watch) or ())

    async def get_config_change(self, name: str) -> str | None:
        """The ``entity_path`` of one config change notification, or None if gone."""
        got = await self._get(f"{CONFIG_CHANGES_PATH}/{name}")
        return ConfigChangeNotification.decode(got[0]).entity_path if got else None

    # --- ISR change notifications, producer ids ---------------------------------------------

    async def create_isr_change_notification(self, partitions: list[tuple[str, int]]) -> None:
        """``/isr_change_notification/isr_change_<seq>`` listing ``partitions``."""
        await self._create(
            f"{ISR_CHANGE_NOTIFICATION_PATH}/{ISR_CHANGE_PREFIX}",
            IsrChangeNotification(tuple(partitions)).encode(),
            sequence=True,
            makepath=True,
        )

    async def get_isr_change_notifications(self, watch: Watch | None = None) -> list[str]:
        """The ``isr_change_<seq>`` node names, in sequence order."""
        return sorted(await self._children(ISR_CHANGE_NOTIFICATION_PATH, watch) or ())

    async def get_isr_change_partitions(self, names: Iterable[str]) -> list[tuple[str, int]]:
        """The partitions named by those notifications (gone ones are skipped)."""
        found = await asyncio.gather(
            *(self._get(f"{ISR_CHANGE_NOTIFICATION_PATH}/{n}") for n in names)
        )
        out: list[tuple[str, int]] = []
        for got in found:
            if got is not None:
                out.extend(IsrChangeNotification.decode(got[0]).partitions)
        return out

    async def delete_isr_change_notifications(
        self, names: Iterable[str], *, controller_epoch_zk_version: int
    ) -> None:
        for name in names:
            with contextlib.suppress(KazooNoNode):
                await self._fenced(
                    controller_epoch_zk_version,
                    [("delete", (f"{ISR_CHANGE_NOTIFICATION_PATH}/{name}",), {})],
                )

    # --- log dir events, preferred elections, legacy reassignments --------------------------

    async def get_log_dir_event_notifications(self, watch: Watch | None = None) -> list[str]:
        """The ``log_dir_event_<seq>`` node names, in sequence order."""
        return sorted(await self._children(LOG_DIR_EVENT_NOTIFICATION_PATH, watch) or ())

    async def get_log_dir_event_brokers(self, names: Iterable[str]) -> list[int]:
        """The broker ids of those notifications (gone ones are skipped)."""
        found = await asyncio.gather(
            *(self._get(f"{LOG_DIR_EVENT_NOTIFICATION_PATH}/{n}") for n in names)
        )
        return [LogDirEventNotification.decode(got[0]).broker for got in found if got is not None]

    async def create_log_dir_event_notification(self, broker_id: int) -> None:
        """``/log_dir_event_notification/log_dir_event_<seq>`` (a log dir failed)."""
        await self._create(
            f"{LOG_DIR_EVENT_NOTIFICATION_PATH}/{LOG_DIR_EVENT_PREFIX}",
            LogDirEventNotification(broker_id).encode(),
            sequence=True,
            makepath=True,
        )

    async def delete_log_dir_event_notifications(
        self, names: Iterable[str], *, controller_epoch_zk_version: int
    ) -> None:
        for name in names:
            with contextlib.suppress(KazooNoNode):
                await self._fenced(
                    controller_epoch_zk_version,
                    [("delete", (f"{LOG_DIR_EVENT_NOTIFICATION_PATH}/{name}",), {})],
                )

    async def get_preferred_replica_election(
        self, watch: Watch | None = None
    ) -> list[tuple[str, int]] | None:
        """The partitions in ``/admin/preferred_replica_election``, or None when there is
        no such node; ``watch`` (exists watch) fires once on create/change/delete."""
        if watch is not None:
            await self._exists(PREFERRED_REPLICA_ELECTION_PATH, watch)
        got = await self._get(PREFERRED_REPLICA_ELECTION_PATH)
        return list(PreferredReplicaElection.decode(got[0]).partitions) if got else None

    async def create_preferred_replica_election(self, partitions: list[tuple[str, int]]) -> None:
        """Create ``/admin/preferred_replica_election`` (NODEEXISTS -> NodeExistsError: an
        election is already pending)."""
        try:
            await self._create(
                PREFERRED_REPLICA_ELECTION_PATH,
                PreferredReplicaElection(tuple(partitions)).encode(),
                makepath=True,
            )
        except KazooNodeExists:
            raise NodeExistsError(PREFERRED_REPLICA_ELECTION_PATH) from None

    async def delete_preferred_replica_election(self, *, controller_epoch_zk_version: int) -> None:
        with contextlib.suppress(KazooNoNode):
            await self._fenced(
                controller_epoch_zk_version, [("delete", (PREFERRED_REPLICA_ELECTION_PATH,), {})]
            )

    async def get_partition_reassignment(
        self, watch: Watch | None = None
    ) -> dict[tuple[str, int], tuple[int, ...]] | None:
        """``/admin/reassign_partitions`` (the pre-2.4 way to reassign), or None; ``watch``
        (exists watch) fires once on create/change/delete."""
        if watch is not None:
            await self._exists(REASSIGN_PARTITIONS_PATH, watch)
        got = await self._get(REASSIGN_PARTITIONS_PATH)
        return PartitionReassignment.decode(got[0]).partitions if got else None

    async def set_partition_reassignment(
        self,
        partitions: Mapping[tuple[str, int], tuple[int, ...]],
        *,
        controller_epoch_zk_version: int,
    ) -> None:
        """Rewrite ``/admin/reassign_partitions`` (fenced); an empty mapping deletes it."""
        v = controller_epoch_zk_version
        if not partitions:
            await self.delete_partition_reassignment(controller_epoch_zk_version=v)
            return
        data = PartitionReassignment(dict(partitions)).encode()
        try:
            await self._fenced(v, [("set_data", (REASSIGN_PARTITIONS_PATH, data), {})])
        except KazooNoNode:
            await self._fenced(v, [("create", (REASSIGN_PARTITIONS_PATH, data), {})])

    async def delete_partition_reassignment(self, *, controller_epoch_zk_version: int) -> None:
        with contextlib.suppress(KazooNoNode):
            await self._fenced(
                controller_epoch_zk_version, [("delete", (REASSIGN_PARTITIONS_PATH,), {})]
            )

    # --- the partition balancer's state (kafkacore's own node) -----------------------------

    async def get_balancer_state(self) -> bytes | None:
        """``/kafkacore/balancer`` as stored (None: never written)."""
        got = await self._get(BALANCER_STATE_PATH)
        return got[0] if got else None

    async def set_balancer_state(self, data: bytes, *, controller_epoch_zk_version: int) -> None:
        """Write ``/kafkacore/balancer`` fenced by the controller epoch (created when
        missing, its parent too)."""
        v = controller_epoch_zk_version
        try:
            await self._fenced(v, [("set_data", (BALANCER_STATE_PATH, data), {})])
        except KazooNoNode:
            await self._ensure_path(BALANCER_STATE_PATH.rsplit("/", 1)[0])
            try:
                await self._fenced(v, [("create", (BALANCER_STATE_PATH, data), {})])
            except KazooNodeExists:
                await self._fenced(v, [("set_data", (BALANCER_STATE_PATH, data), {})])

    async def allocate_producer_id_block(self, broker_id: int) -> tuple[int, int]:
        """Take the next block of 1000 producer ids: a compare-and-set loop on
        ``/latest_producer_id_block``. Returns ``(first, last)``, both inclusive."""
        while True:
            got = await self._get(PRODUCER_ID_BLOCK_PATH)
            if got is None:
                await self._ensure_path(PRODUCER_ID_BLOCK_PATH)
                continue
            data, stat = got
            start = ProducerIdBlock.decode(data).block_end + 1 if data else 0
            if start > (1 << 63) - 1 - PRODUCER_ID_BLOCK_SIZE:
                raise OverflowError("every producer id has been allocated")
            block = ProducerIdBlock(broker_id, start, start + PRODUCER_ID_BLOCK_SIZE - 1)
            try:
                data, version = block.encode(), int(stat.version)
                await self._call(
                    lambda: self._zk.set_async(PRODUCER_ID_BLOCK_PATH, data, version)  # noqa: B023
                )
            except KazooBadVersion:
                continue
            return block.block_start, block.block_end

    # --- ACLs (Kafka 3.x ZkAclStore / AclAuthorizer paths) -----------------------------------

    # --- /feature ---------------------------------------------------------------------------

    async def get_feature_znode(
        self, watch: Watch | None = None
    ) -> tuple[FeatureZNode, int] | None:
        """``/feature`` and its znode version (the features epoch); None when absent.
        ``watch`` fires on its creation, change or deletion."""
        got = await self._get(FEATURE_PATH, watch)
        if got is None:
            if watch is not None:
                await self._exists(FEATURE_PATH, watch)  # to hear of its creation
            return None
        data, stat = got
        return FeatureZNode.decode(data), int(stat.version)

    async def create_feature_znode(self, node: FeatureZNode) -> int:
        """Kafka's ``createFeatureZNode``; the new znode's version (0)."""
        await self._create(FEATURE_PATH, node.encode())
        got = await self._get(FEATURE_PATH)
        return int(got[1].version) if got is not None else 0

    async def get_finalized_features(self, watch: Watch | None = None) -> FinalizedFeatures:
        """The finalized features ``/feature`` holds: its levels (none while disabled),
        at its znode version (Kafka's ``ZkFinalizedFeatureCache``; no node: none, epoch
        -1)."""
        got = await self.get_feature_znode(watch)
        if got is None:
            return FinalizedFeatures({}, -1)
        node, version = got
        levels = dict(node.features) if node.status == FEATURE_ZNODE_ENABLED else {}
        return FinalizedFeatures(levels, version)

    async def update_finalized_features(
        self, update: Callable[[FinalizedFeatures], Mapping[str, int]]
    ) -> FinalizedFeatures:
        """Read-modify-write of ``/feature`` (enabled, version 2), retried while another
        writer wins the race; the features now in force. What ``update`` raises is
        raised, nothing written."""
        while True:
            current = await self.get_finalized_features()
            changes = update(current)
            if all(current.level(name) == level for name, level in changes.items()):
                return current
            wanted = current.with_levels(changes)
            node = FeatureZNode({n: v for n, v in wanted.levels.items() if v >= 1})
            version = await self.conditional_set_feature_znode(node, current.epoch)
            if version is not None:
                return FinalizedFeatures(node.features, version)

    async def conditional_set_feature_znode(self, node: FeatureZNode, version: int) -> int | None:
        """Write ``/feature`` if still at ``version`` (-1: create it if absent); its new
        version, or None on a lost race."""
        try:
            if version < 0:
                return await self.create_feature_znode(node)
            data = node.encode()
            stat = await self._call(lambda: self._zk.set_async(FEATURE_PATH, data, version))
        except (KazooNodeExists, KazooBadVersion, KazooNoNode):
            return None
        return int(stat.version)

    async def create_acl_paths(self) -> None:
        """Kafka's ``createAclPaths``: ``/kafka-acl/<Type>``,
        ``/kafka-acl-extended/prefixed/<Type>`` and both change roots."""
        paths = [ACL_CHANGES_PATH, EXTENDED_ACL_CHANGES_PATH]
        for root in (LITERAL_ACL_PATH, _PREFIXED_ACL_PATH):
            paths += [f"{root}/{t.pascal}" for t in ACL_RESOURCE_TYPES]
        await asyncio.gather(*(self._ensure_path(p) for p in paths))

    async def get_acl_patterns(self) -> list[ResourcePattern]:
        """Every resource pattern that has an ACL znode."""
        out: list[ResourcePattern] = []
        for kind in ACL_RESOURCE_TYPES:
            for root, pattern_type in (
                (LITERAL_ACL_PATH, PatternType.LITERAL),
                (_PREFIXED_ACL_PATH, PatternType.PREFIXED),
            ):
                names = await self._children(f"{root}/{kind.pascal}") or ()
                out.extend(ResourcePattern(kind, n, pattern_type) for n in sorted(names))
        return out

    async def get_acls(self, pattern: ResourcePattern) -> tuple[frozenset[AccessControlEntry], int]:
        """A resource's ACLs and its znode version (-1: no znode, Kafka's UnknownVersion)."""
        got = await self._get(zk_acl_path(pattern))
        if got is None:
            return frozenset(), -1
        data, stat = got
        return decode_acl_znode(data), int(stat.version)

    async def conditional_set_acls(
        self, pattern: ResourcePattern, entries: frozenset[AccessControlEntry], version: int
    ) -> bool:
        """Kafka's ``conditionalSetAclsForResource`` / ``createAclsForResourceIfNotExists``
        / ``conditionalDelete``: write (or delete, when ``entries`` is empty) the znode if it
        is still at ``version`` (-1: if it does not exist). False on a lost race."""
        path = zk_acl_path(pattern)
        data = encode_acl_znode(entries)
        try:
            if version < 0:
                if not entries:
                    return await self._exists(path) is None
                await self._create(path, data, makepath=True)
            elif entries:
                await self._call(lambda: self._zk.set_async(path, data, version))
            else:
                await self._call(lambda: self._zk.delete_async(path, version))
        except (KazooNodeExists, KazooBadVersion):
            return False
        except KazooNoNode:
            return not entries
        return True

    async def create_acl_change_notification(self, pattern: ResourcePattern) -> None:
        """``/kafka-acl-changes/acl_changes_<seq>`` (LITERAL) or
        ``/kafka-acl-extended-changes/acl_changes_<seq>`` (PREFIXED)."""
        root = zk_change_root(pattern.pattern_type)
        await self._create(
            f"{root}/{ACL_CHANGE_PREFIX}", encode_acl_change(pattern), sequence=True, makepath=True
        )

    async def get_acl_changes(self, root: str, watch: Watch | None = None) -> list[str]:
        """The ``acl_changes_<seq>`` names under ``root``, in sequence order."""
        names = await self._children(root, watch) or ()
        return sorted(n for n in names if n.startswith(ACL_CHANGE_PREFIX))

    async def get_acl_change(self, root: str, name: str) -> tuple[ResourcePattern, float] | None:
        """The pattern an ACL change notification names and its creation time (epoch
        seconds), or None if it is gone."""
        got = await self._get(f"{root}/{name}")
        if got is None:
            return None
        data, stat = got
        if root == ACL_CHANGES_PATH:
            pattern = decode_acl_change(data)
        else:
            pattern = decode_extended_acl_change(data)
        return pattern, int(stat.ctime) / 1000

    async def delete_acl_change(self, root: str, name: str) -> None:
        with contextlib.suppress(KazooNoNode):
            await self._call(lambda: self._zk.delete_async(f"{root}/{name}"))


async def _bridge(loop: asyncio.AbstractEventLoop, async_result: Any) -> Any:
    """Await a kazoo ``IAsyncResult``: its completion (on kazoo's thread) is handed to
    ``loop`` with ``call_soon_threadsafe``."""
    future: asyncio.Future[Any] = loop.create_future()

    def settle_result(value: Any) -> None:
        if not future.done():
            future.set_result(value)

    def settle_error(error: BaseException) -> None:
        if not future.done():
            future.set_exception(error)

    def on_done(result: Any) -> None:
        try:
            value = result.get_nowait()
        except BaseException as error:
            _post(loop, settle_error, error)
        else:
            _post(loop, settle_result, value)

    async_result.rawlink(on_done)
    return await future


def _post(loop: asyncio.AbstractEventLoop, fn: Callable[[Any], None], arg: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
        loop.call_soon_threadsafe(fn, arg)


def _stop_quietly(zk: Any) -> None:
    try:
        zk.stop()
    finally:
        zk.close()
