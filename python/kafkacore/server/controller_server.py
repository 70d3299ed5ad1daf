"""A KRaft node of ``kafkacore server-start`` (Kafka's ``KafkaRaftServer`` with its
``ControllerServer``): ``process.roles=controller`` runs the controller half assembled by
:func:`~kafkacore.server.assembly.kraft_controller` - the controller listeners bound to
the :class:`~kafkacore.server.controller_apis.ControllerApis`, the Raft replica of
``__cluster_metadata`` and the quorum controller; ``process.roles=broker,controller``
adds the broker half (:func:`~kafkacore.server.assembly.kraft_broker`, issue 27 part B).

Event loop thread only.
"""

from __future__ import annotations

import asyncio
import logging

from kafkacore.config import BrokerConfig
from kafkacore.server.assembly import AssembledController, kraft_broker, kraft_controller
from kafkacore.server.broker import listener_security
from kafkacore.server.network import Limits, SocketServer

__all__ = ["KRaftServer"]

logger = logging.getLogger("kafkacore.server")


class KRaftServer:
    """One KRaft node (see the module docstring). :attr:`fatal` is set when it must stop
    on its own (the controller or the Raft replica failed)."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.node_id = config.node_id
        self.controller: AssembledController | None = None
        self.socket_server: SocketServer | None = None
        self.fatal = asyncio.Event()
        self.exit_code = 0
        self._watch: asyncio.Task[None] | None = None
        self._prefix = f"[KafkaRaftServer nodeId={self.node_id}]"

    async def startup(self) -> None:
        logger.info("%s starting", self._prefix)
        roles = self.config.process_roles or []
        if "controller" in roles:
            tls, _sasl = listener_security(self.config)
            assembled = self.controller = kraft_controller(self.config)
            config = self.config
            server = SocketServer(
                assembled.apis,
                [(e.listener_name, e.host, e.port) for e in assembled.endpoints],
                Limits(
                    max_request_bytes=config.socket_request_max_bytes,
                    idle_ms=config.connections_max_idle_ms,
                ),
                {e.listener_name: e.security_protocol for e in assembled.endpoints},
                {
                    k: v
                    for k, v in tls.items()
                    if k in {e.listener_name for e in assembled.endpoints}
                },
            )
            await server.start()
            self.socket_server = server
            await assembled.raft.start()
            await assembled.controller.start()
            self._watch = asyncio.ensure_future(self._watch_failures())
            logger.info("%s controller started (cluster id %s)", self._prefix, assembled.cluster_id)
        if "broker" in roles:
            kraft_broker(self.config)

    async def _watch_failures(self) -> None:
        assert self.controller is not None
        while True:
            await asyncio.sleep(0.2)
            failure = self.controller.raft.failure or self.controller.controller.fatal
            if failure is not None:
                logger.error("%s stopping after a fatal fault: %r", self._prefix, failure)
                self.exit_code = 1
                self.fatal.set()
                return

    async def shutdown(self) -> None:
        logger.info("%s shutting down", self._prefix)
        if self._watch is not None:
            self._watch.cancel()
        assembled = self.controller
        if self.socket_server is not None:
            await self.socket_server.stop_accepting()
        if assembled is not None:
            await assembled.controller.stop()
            await assembled.raft.shutdown(2000)
        if self.socket_server is not None:
            await self.socket_server.close_connections()
        if assembled is not None:
            assembled.metadata_log.close()
        logger.info("%s shut down completed", self._prefix)
