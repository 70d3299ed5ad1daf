"""kafkacore's coordinator records against Apache Kafka 4.3.1's coordinators.

* ``__consumer_offsets`` (every record type: the classic group's, KIP-848's consumer
  groups 3-8 and 16, KIP-932's share groups 10-15, the streams groups 17-23) and
  ``__share_group_state`` (ShareSnapshot, ShareUpdate): each declaration equals Kafka's
  definition (the JSON in the coordinator jars); for every type and value version, a
  dense value and hypothesis-drawn values, and a tombstone, are serialized by Kafka's
  ``GroupCoordinatorRecordSerde`` / ``ShareCoordinatorRecordSerde`` from their JSON
  (java/CoordinatorRecords.java, line mode). Our encoder must write the same key and value
  bytes, our decoder must read Kafka's bytes to the same values, and Kafka's reading of its
  bytes must print our JSON.
* ``__transaction_state``: TransactionLogValue v0 and v1 (the tagged PreviousProducerId,
  NextProducerId, ClientTransactionVersion and NextProducerEpoch of transaction version
  2), written by ``txn_records`` as the transaction coordinator writes them, against
  ``TransactionCoordinatorRecordSerde``.

(``test_dump_log_vs_kafka`` compares what Kafka's DumpLogSegments prints of these records.)
"""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacore.coordinator import records
from kafkacore.coordinator.codec import UNKNOWN_TAGS, Reader, read_message, to_json, write_message
from kafkacore.coordinator.share_records import SHARE_STATE_RECORDS
from kafkacore.coordinator.txn_records import (
    TransactionLogValue,
    TransactionState,
    decode_txn_key,
    decode_txn_value,
    encode_txn_key,
    encode_txn_value,
    txn_key_to_text,
    txn_value_to_text,
)
from kafkacore.protocol.samples import sample
from kafkacore.protocol.schema import KafkaStruct, MessageSchema
from support.kafka_json import first_difference
from support.kafka_schemas import kafka_definitions, schema_differences
from support.sampled import EXAMPLES, check_samples

pytestmark = [pytest.mark.interop, pytest.mark.downloads]


def _group_types() -> dict[int, tuple[MessageSchema, MessageSchema]]:
    found = {}
    for record_type in range(64):
        with contextlib.suppress(records.UnknownRecordType):
            found[record_type] = records.record_schemas(record_type)
    return found


COORDINATORS = {"group": _group_types(), "share": SHARE_STATE_RECORDS}
CASES = [
    (coordinator, record_type, version)
    for coordinator, types in COORDINATORS.items()
    for record_type, (_, value) in types.items()
    for version in value.valid
]
TYPES = [(c, t) for c, types in COORDINATORS.items() for t in types]


def _ids(cases: list[tuple[Any, ...]]) -> list[str]:
    return [
        f"{COORDINATORS[c][t][1].name.removesuffix('Value')}-" + "-".join(map(str, rest))
        for c, t, *rest in cases
    ]


@pytest.fixture(scope="module")
def definitions(kafka_libs: Path) -> dict[str, dict[str, Any]]:
    return kafka_definitions(kafka_libs)


@pytest.fixture(scope="module")
def serde(java: Any) -> Iterator[Any]:
    """CoordinatorRecords.java in its line mode."""
    with java.serve("CoordinatorRecords") as server:
        yield server


def _plain(value: Any) -> Any:
    """A decoded struct without its (empty) unknown tagged fields."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != UNKNOWN_TAGS}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _kafka_record(serde: Any, case: dict[str, Any]) -> tuple[bytes, bytes | None, dict[str, Any]]:
    status, _, rest = serde.ask(json.dumps(case, ensure_ascii=False)).partition(" ")
    assert status == "ok", f"Kafka refused our record {case}: {rest}"
    key_hex, value_hex, kafka_json = rest.split(" ", 2)
    value = None if value_hex == "-" else bytes.fromhex(value_hex)
    return bytes.fromhex(key_hex), value, json.loads(kafka_json)


def _encode(
    coordinator: str,
    record_type: int,
    key: dict[str, Any],
    version: int,
    value: dict[str, Any] | None,
) -> tuple[bytes, bytes | None]:
    if coordinator == "group":
        return records.encode_record(record_type, key, version, value)
    key_schema, value_schema = SHARE_STATE_RECORDS[record_type]  # the same framing
    key_bytes = record_type.to_bytes(2, "big") + write_message(key_schema, key, 0)
    if value is None:
        return key_bytes, None
    return key_bytes, version.to_bytes(2, "big") + write_message(value_schema, value, version)


def _decode(
    coordinator: str, key: bytes, value: bytes | None
) -> tuple[int, dict[str, Any], int, dict[str, Any] | None]:
    if coordinator == "group":
        record = records.decode_record(key, value)
        return record.type, record.key, record.version, record.value
    reader = Reader(key)
    record_type = reader.int16()
    key_schema, value_schema = SHARE_STATE_RECORDS[record_type]
    key_value = read_message(key_schema, reader, record_type)  # Kafka reads keys at the type
    assert reader.remaining() == 0
    if value is None:
        return record_type, key_value, -1, None
    reader = Reader(value)
    version = reader.int16()
    decoded = read_message(value_schema, reader, version)
    assert reader.remaining() == 0
    return record_type, key_value, version, decoded


def _compare(
    serde: Any,
    coordinator: str,
    record_type: int,
    key: KafkaStruct,
    version: int,
    value: KafkaStruct | None,
) -> None:
    key_schema, value_schema = COORDINATORS[coordinator][record_type]
    key_dict = key.to_dict()
    value_dict = None if value is None else value.to_dict()
    key_json = json.loads(to_json(key_schema, key_dict, 0))
    value_json = (
        None if value_dict is None else json.loads(to_json(value_schema, value_dict, version))
    )
    kafka_key, kafka_value, kafka = _kafka_record(
        serde,
        {
            "coordinator": coordinator,
            "type": record_type,
            "key": key_json,
            "version": version,
            "value": value_json,
        },
    )
    assert _encode(coordinator, record_type, key_dict, version, value_dict) == (
        kafka_key,
        kafka_value,
    )
    decoded = _decode(coordinator, kafka_key, kafka_value)
    expected_version = version if value is not None else -1
    assert (decoded[0], decoded[2]) == (record_type, expected_version)
    assert _plain(decoded[1]) == key_dict
    assert _plain(decoded[3]) == value_dict
    ours = {"key": key_json, "value": value_json}
    assert ours == kafka, first_difference(ours, kafka, value_schema.name)


@pytest.mark.parametrize(("coordinator", "record_type"), TYPES, ids=_ids(TYPES))
def test_declaration_is_kafkas_definition(
    definitions: dict[str, dict[str, Any]], coordinator: str, record_type: int
) -> None:
    problems = []
    for schema in COORDINATORS[coordinator][record_type]:
        kafka = definitions[schema.name]
        assert kafka["apiKey"] == record_type
        assert kafka["type"] == f"coordinator-{schema.kind}"
        problems += schema_differences(schema, kafka, list(schema.valid))
        assert str(schema.valid).replace("0-0", "0") == kafka["validVersions"]
    assert not problems, "\n".join(problems)


def test_every_kafka_coordinator_record_is_declared(definitions: dict[str, dict[str, Any]]) -> None:
    """The coordinator records of Kafka 4.3.1's group and share coordinators, all declared."""
    ours = {s.name for types in COORDINATORS.values() for pair in types.values() for s in pair}
    kafka = {name for name, d in definitions.items() if d["type"].startswith("coordinator-")}
    assert kafka - ours == {"TransactionLogKey", "TransactionLogValue"}  # txn_records's, below


def test_consumer_protocol_is_kafkas(definitions: dict[str, dict[str, Any]]) -> None:
    """The consumer protocol a classic group's members carry (records.py declares it)."""
    for schema in (records.CONSUMER_PROTOCOL_SUBSCRIPTION, records.CONSUMER_PROTOCOL_ASSIGNMENT):
        problems = schema_differences(schema, definitions[schema.name], list(schema.valid))
        assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("coordinator", "record_type", "version"), CASES, ids=_ids(CASES))
def test_same_bytes_and_values_as_kafka(
    serde: Any, coordinator: str, record_type: int, version: int
) -> None:
    key_schema, value_schema = COORDINATORS[coordinator][record_type]
    keys: list[KafkaStruct] = []

    def check(value: KafkaStruct) -> None:
        key = _key_for(key_schema, value, len(keys))
        keys.append(key)
        _compare(serde, coordinator, record_type, key, version, value)

    check_samples(value_schema, version, check)
    _compare(serde, coordinator, record_type, keys[0], version, None)  # a tombstone


def _key_for(key_schema: MessageSchema, value: KafkaStruct, n: int) -> KafkaStruct:
    """A key drawn alongside ``value`` (keys are version 0 and small: a dense one first)."""
    return sample(key_schema, 0, random.Random(f"{value!r}-{n}"), dense=n == 0)


# --- __transaction_state ------------------------------------------------------------------------

_INT64 = st.integers(-(2**63), 2**63 - 1)
_INT16 = st.integers(-(2**15), 2**15 - 1)
_INT32 = st.integers(-(2**31), 2**31 - 1)


@st.composite
def _txn_values(draw: st.DrawFn, version: int) -> TransactionLogValue:
    state = draw(st.sampled_from(TransactionState))
    partitions = None
    if state is not TransactionState.EMPTY:
        partitions = draw(
            st.none()
            | st.dictionaries(st.text(max_size=8), st.lists(_INT32, max_size=3), max_size=3)
        )
    tagged: dict[str, Any] = {}
    if version >= 1:
        tagged = {
            "previous_producer_id": draw(_INT64),
            "next_producer_id": draw(_INT64),
            "client_transaction_version": draw(_INT16),
            "next_producer_epoch": draw(_INT16),
        }
    return TransactionLogValue(
        producer_id=draw(_INT64),
        producer_epoch=draw(_INT16),
        timeout_ms=draw(_INT32),
        state=state,
        partitions=partitions,
        last_update_timestamp_ms=draw(_INT64),
        start_timestamp_ms=draw(_INT64),
        version=version,
        **tagged,
    )


def _compare_txn(serde: Any, transactional_id: str, value: TransactionLogValue) -> None:
    key_json = json.loads(txn_key_to_text(transactional_id))["data"]
    value_json = json.loads(txn_value_to_text(value))["data"]
    kafka_key, kafka_value, kafka = _kafka_record(
        serde,
        {
            "coordinator": "transaction",
            "type": 0,
            "key": key_json,
            "version": value.version,
            "value": value_json,
        },
    )
    assert (encode_txn_key(transactional_id), encode_txn_value(value, value.version)) == (
        kafka_key,
        kafka_value,
    )
    assert decode_txn_key(kafka_key) == transactional_id
    decoded = decode_txn_value(kafka_value)
    assert decoded == value and decoded is not None and decoded.version == value.version
    assert {"key": key_json, "value": value_json} == kafka


@pytest.mark.parametrize("version", [0, 1])
def test_transaction_log_same_bytes_as_kafka(serde: Any, version: int) -> None:
    # every tagged field away from its default, so none goes uncompared
    dense = TransactionLogValue(
        producer_id=7,
        producer_epoch=3,
        timeout_ms=60_000,
        state=TransactionState.PREPARE_COMMIT,
        partitions={"orders": [0, 2], "é": [1]},
        last_update_timestamp_ms=1_700_000_000_000,
        start_timestamp_ms=1_699_999_999_000,
        previous_producer_id=6 if version else -1,
        next_producer_id=8 if version else -1,
        client_transaction_version=2 if version else 0,
        next_producer_epoch=0 if version else -1,
        version=version,
    )
    _compare_txn(serde, "tx-dense", dense)

    @settings(
        max_examples=EXAMPLES * 10,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(transactional_id=st.text(max_size=10), value=_txn_values(version))
    def check(transactional_id: str, value: TransactionLogValue) -> None:
        _compare_txn(serde, transactional_id, value)

    check()
