"""Real clients' request frames, captured: confluent-kafka (librdkafka) producing with
each compression codec, consuming in a group (JoinGroup, SyncGroup, Heartbeat,
OffsetCommit, Fetch with sessions, ...) and administering (CreateTopics,
DescribeConfigs, ...), through a recording TCP proxy in front of a broker (the broker
advertises the proxy's address, so every connection of the clients goes through it).
The network fuzzer's seeds, next to the ones drawn from the schemas."""

from __future__ import annotations

import asyncio
import contextlib
import struct
import threading
import time
import uuid
from typing import Any

__all__ = ["Proxy", "capture_confluent"]


class Proxy:
    """127.0.0.1:``port`` -> ``upstream``, recording every frame the clients send (size
    prefix included) while :attr:`recording`. Runs its own event loop on a thread."""

    def __init__(self, upstream: tuple[str, int], port: int = 0) -> None:
        self.upstream = upstream
        self.frames: list[bytes] = []
        self.recording = True
        self.port = port
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._server: asyncio.Server | None = None

    def start(self) -> Proxy:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._client, "127.0.0.1", self.port, reuse_address=True)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_r, up_w = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        back = asyncio.ensure_future(self._pipe(up_r, writer))
        try:
            while True:
                head = await reader.readexactly(4)
                body = await reader.readexactly(struct.unpack(">i", head)[0])
                if self.recording:
                    self.frames.append(head + body)
                up_w.write(head + body)
                await up_w.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            back.cancel()
            up_w.close()
            writer.close()

    @staticmethod
    async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()


def capture_confluent(proxy: Proxy, seconds: float = 6.0) -> list[bytes]:
    """Request frames of a confluent-kafka producer, consumer group and admin client's
    short session through ``proxy`` (whose address the broker advertises)."""
    import confluent_kafka
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

    start = len(proxy.frames)
    bootstrap = f"127.0.0.1:{proxy.port}"
    topic = f"netfuzz-capture-{uuid.uuid4().hex[:8]}"
    common: dict[str, Any] = {"bootstrap.servers": bootstrap, "log_level": 0}
    try:
        admin = AdminClient(common)
        with contextlib.suppress(Exception):
            admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(10)
        with contextlib.suppress(Exception):
            admin.describe_configs([ConfigResource("topic", topic)])
        for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
            producer = confluent_kafka.Producer(
                {**common, "compression.type": codec, "linger.ms": 5, "enable.idempotence": True}
            )
            for i in range(50):
                producer.produce(topic, key=b"k%d" % i, value=b"v" * (i * 10), headers={"h": b"x"})
            producer.flush(10)
        consumer = confluent_kafka.Consumer(
            {
                **common,
                "group.id": topic,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        consumer.subscribe([topic])
        deadline = time.monotonic() + seconds
        got = 0
        while time.monotonic() < deadline and got < 250:
            msg = consumer.poll(0.2)
            if msg is not None and not msg.error():
                got += 1
        with contextlib.suppress(Exception):
            consumer.commit(asynchronous=False)
        consumer.close()
    finally:
        proxy.recording = False
    return list(proxy.frames[start:])
