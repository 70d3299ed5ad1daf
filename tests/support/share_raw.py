"""Raw share-group requests to one broker (kafkacore or Apache Kafka): a member's share
session is bound to its connection, so each member keeps one socket open; answers are
normalized for comparison (topic ids, random per cluster, become topic names; record
batches become the offsets they carry)."""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from typing import Any

from kafkacore import record
from kafkacore.protocol import APIS_BY_NAME, ErrorCode, RequestHeader
from kafkacore.protocol.api import encode_request
from support.raw_brokers import Raw, until
from support.raw_client import receive_blocking

__all__ = ["ShareBroker", "ShareMember", "batch_offsets"]

_RETRIABLE = (
    ErrorCode.NOT_COORDINATOR,
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
)


def batch_offsets(records: Any) -> list[tuple[int, int]]:
    """``(base, last)`` of each batch in a Records field."""
    data = bytes(records or b"")
    return [
        (h.base_offset, h.last_offset)
        for h in (record.batch_header(data, pos) for pos, _, _ in record.iter_batches(data))
    ]


class ShareBroker:
    """One broker: topics, records and group configs for the share tests."""

    def __init__(self, raw: Raw) -> None:
        self.raw = raw
        self.ids: dict[str, Any] = {}
        self.names: dict[Any, str] = {}

    def create_topic(self, name: str, partitions: int = 1) -> None:
        req = APIS_BY_NAME["CreateTopics"].request.cls
        created = self.raw.call(
            "CreateTopics",
            5,
            topics=[req.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)],
            timeout_ms=30_000,
        )
        assert created.topics[0].error_code in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS)
        meta = APIS_BY_NAME["Metadata"].request.cls

        def ready() -> bool:
            m = self.raw.call("Metadata", 12, topics=[meta.MetadataRequestTopic(name=name)])
            parts = m.topics[0].partitions
            if len(parts) == partitions and all(
                p.error_code == 0 and p.leader_id >= 0 for p in parts
            ):
                self.ids[name] = m.topics[0].topic_id
                self.names[m.topics[0].topic_id] = name
                return True
            return False

        until(f"{name} has leaders", ready)

    def produce(self, topic: str, partition: int, batch: bytes) -> None:
        req = APIS_BY_NAME["Produce"].request.cls
        response = self.raw.call(
            "Produce",
            9,
            transactional_id=None,
            acks=-1,
            timeout_ms=5000,
            topic_data=[
                req.TopicProduceData(
                    name=topic,
                    partition_data=[req.PartitionProduceData(index=partition, records=batch)],
                )
            ],
        )
        code = response.responses[0].partition_responses[0].error_code
        assert code == 0, ErrorCode(code).name

    def set_group_configs(self, group: str, configs: dict[str, str]) -> Any:
        req = APIS_BY_NAME["IncrementalAlterConfigs"].request.cls
        response = self.raw.call(
            "IncrementalAlterConfigs",
            1,
            resources=[
                req.AlterConfigsResource(
                    resource_type=32,
                    resource_name=group,
                    configs=[
                        req.AlterableConfig(name=k, config_operation=0, value=v)
                        for k, v in configs.items()
                    ],
                )
            ],
            validate_only=False,
        )
        answer = response.responses[0]
        if answer.error_code == 0:
            until("the group configs apply", lambda: self.group_configs(group, configs) == configs)
        return answer

    def group_configs(self, group: str, names: Sequence[str]) -> dict[str, str]:
        """The group configs ``names`` as DescribeConfigs answers them (Kafka applies an
        alteration when the metadata reaches the broker)."""
        req = APIS_BY_NAME["DescribeConfigs"].request.cls
        response = self.raw.call(
            "DescribeConfigs",
            4,
            resources=[
                req.DescribeConfigsResource(
                    resource_type=32, resource_name=group, configuration_keys=list(names)
                )
            ],
            include_synonyms=False,
            include_documentation=False,
        )
        return {c.name: c.value for c in response.results[0].configs}

    def member(self, group: str, member_id: str) -> ShareMember:
        return ShareMember(self, group, member_id)


class ShareMember:
    """One share consumer: its heartbeats and its share session on one connection."""

    def __init__(self, broker: ShareBroker, group: str, member_id: str) -> None:
        self.broker = broker
        self.group = group
        self.member_id = member_id
        self.epoch = 0
        self.session_epoch = 0
        self.sock = socket.create_connection(("localhost", broker.raw.port), timeout=30)
        self.cid = 0

    def close(self) -> None:
        self.sock.close()

    def _call(self, name: str, version: int, **fields: Any) -> Any:
        api = APIS_BY_NAME[name]
        self.cid += 1
        header = RequestHeader(api.key, version, self.cid, "share-" + self.member_id)
        self.sock.sendall(encode_request(header, api.request.cls(**fields)))
        got, response = receive_blocking(self.sock, name, version)
        assert got == self.cid
        return response

    def heartbeat(self, topics: Sequence[str] | None = None, epoch: int | None = None) -> Any:
        answer = self.broker.raw.call(
            "ShareGroupHeartbeat",
            1,
            group_id=self.group,
            member_id=self.member_id,
            member_epoch=self.epoch if epoch is None else epoch,
            rack_id=None,
            subscribed_topic_names=list(topics) if topics is not None else None,
        )
        if answer.error_code == 0:
            self.epoch = answer.member_epoch
        return answer

    def join(self, topics: Sequence[str], partitions: int = 1) -> None:
        """Join and heartbeat until the topics' partitions are assigned (the share state
        is initialized first, then assigned on a later heartbeat)."""
        find = APIS_BY_NAME["FindCoordinator"].request.cls

        def found() -> bool:
            r = self.broker.raw.call(
                "FindCoordinator", 4, key_type=0, coordinator_keys=[self.group]
            )
            return r.coordinators[0].error_code == 0

        until("the group coordinator", found)
        del find
        answer = until(
            "the first heartbeat",
            lambda: (a := self.heartbeat(topics, epoch=0)).error_code not in _RETRIABLE and a,
        )
        assert answer.error_code == 0, answer
        deadline = time.monotonic() + 60
        while True:
            if answer.assignment is not None:
                count = sum(len(tp.partitions) for tp in answer.assignment.topic_partitions)
                if count >= partitions:
                    return
            assert time.monotonic() < deadline, "no assignment"
            time.sleep(0.3)
            answer = self.heartbeat(topics)

    def fetch(
        self,
        topic: str,
        partition: int = 0,
        *,
        max_records: int = 500,
        batch_size: int = 500,
        mode: int = 0,
        max_wait_ms: int = 300,
        acks: Sequence[tuple[int, int, Sequence[int]]] = (),
        version: int = 2,
        epoch: int | None = None,
        is_renew_ack: bool = False,
    ) -> Any:
        req = APIS_BY_NAME["ShareFetch"].request.cls
        session_epoch = self.session_epoch if epoch is None else epoch
        response = self._call(
            "ShareFetch",
            version,
            group_id=self.group,
            member_id=self.member_id,
            share_session_epoch=session_epoch,
            max_wait_ms=max_wait_ms,
            min_bytes=1,
            max_bytes=1 << 20,
            max_records=max_records,
            batch_size=batch_size,
            share_acquire_mode=mode,
            is_renew_ack=is_renew_ack,
            topics=[
                req.FetchTopic(
                    topic_id=self.broker.ids[topic],
                    partitions=[
                        req.FetchPartition(
                            partition_index=partition,
                            acknowledgement_batches=[
                                req.AcknowledgementBatch(
                                    first_offset=f, last_offset=la, acknowledge_types=list(t)
                                )
                                for f, la, t in acks
                            ],
                        )
                    ],
                )
            ],
            forgotten_topics_data=[],
        )
        if response.error_code == 0 and epoch is None:
            self.session_epoch = 1 if self.session_epoch <= 0 else self.session_epoch + 1
        return response

    def first_fetch(self, topic: str, **kw: Any) -> Any:
        """A session's first fetch (epoch 0), repeated until it acquires records (the
        share partition loads in the background; an answer meanwhile may be empty)."""
        deadline = time.monotonic() + 60
        while True:
            response = self.fetch(topic, epoch=0, **kw)
            acquired = any(p.acquired_records for t in response.responses for p in t.partitions)
            if acquired or response.error_code or time.monotonic() > deadline:
                self.session_epoch = 1
                return response
            time.sleep(0.2)

    def acknowledge(
        self,
        topic: str,
        acks: Sequence[tuple[int, int, Sequence[int]]],
        partition: int = 0,
        *,
        version: int = 2,
        epoch: int | None = None,
        is_renew_ack: bool = False,
    ) -> Any:
        req = APIS_BY_NAME["ShareAcknowledge"].request.cls
        session_epoch = self.session_epoch if epoch is None else epoch
        response = self._call(
            "ShareAcknowledge",
            version,
            group_id=self.group,
            member_id=self.member_id,
            share_session_epoch=session_epoch,
            is_renew_ack=is_renew_ack,
            topics=[
                req.AcknowledgeTopic(
                    topic_id=self.broker.ids[topic],
                    partitions=[
                        req.AcknowledgePartition(
                            partition_index=partition,
                            acknowledgement_batches=[
                                req.AcknowledgementBatch(
                                    first_offset=f, last_offset=la, acknowledge_types=list(t)
                                )
                                for f, la, t in acks
                            ],
                        )
                    ],
                )
            ],
        )
        if response.error_code == 0 and epoch is None and session_epoch > 0:
            self.session_epoch += 1
        return response

    def normalized(self, response: Any) -> dict[str, Any]:
        """A ShareFetch/ShareAcknowledge answer, topic ids named, records as batches."""
        out: dict[str, Any] = {
            "error_code": ErrorCode(response.error_code).name,
            "lock_timeout": getattr(response, "acquisition_lock_timeout_ms", None),
        }
        parts = []
        for topic in response.responses:
            name = self.broker.names.get(topic.topic_id, "?")
            for p in topic.partitions:
                entry: dict[str, Any] = {
                    "topic": name,
                    "partition": p.partition_index,
                    "error_code": ErrorCode(p.error_code).name,
                }
                if hasattr(p, "acknowledge_error_code"):
                    entry["ack_error_code"] = ErrorCode(p.acknowledge_error_code).name
                    entry["acquired"] = [
                        (a.first_offset, a.last_offset, a.delivery_count)
                        for a in p.acquired_records
                    ]
                    entry["batches"] = batch_offsets(p.records)
                parts.append(entry)
        out["partitions"] = sorted(parts, key=lambda e: (e["topic"], e["partition"]))
        return out
