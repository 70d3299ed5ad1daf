"""The embedded metadata store's file (``metadata.json``) is written from each topic's
cached text (encoded again only when the topic changed), byte for byte what encoding the
whole metadata at once gives; creating topics one by one encodes each topic once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafkacore.metadata import embedded
from kafkacore.metadata.embedded import METADATA_FILE, EmbeddedMetadataStore


def _plain(store: EmbeddedMetadataStore, path: Path) -> str:
    """The file as one json.dumps of everything would write it."""
    data: dict[str, Any] = json.loads(path.read_text())
    data["topics"] = {name: embedded._topic_to_json(t) for name, t in sorted(store._topics.items())}
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def test_file_is_the_plain_encoding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[str] = []
    original = embedded._topic_to_json

    def counting(topic: Any) -> dict[str, Any]:
        encoded.append(topic.name)
        return original(topic)

    monkeypatch.setattr(embedded, "_topic_to_json", counting)
    store = EmbeddedMetadataStore(tmp_path, 1)
    path = tmp_path / METADATA_FILE
    store.set_cluster_id("c")
    assert json.loads(path.read_text())["topics"] == {}
    for i in range(30):
        store.create_topic(f"t{29 - i:02d}", [[1]] * (i % 4 + 1), {"retention.ms": str(i)})
    assert len(encoded) == 30  # once each, not 1 + 2 + ... + 30
    store.set_partitions("t05", [[1]] * 9)
    store.set_topic_configs("t07", {"cleanup.policy": "compact", "ü": "\u00e9"})
    store.delete_topic("t11")
    assert encoded[30:] == ["t05", "t07"]
    encoded.clear()
    assert path.read_text() == _plain(store, path)
    reloaded = EmbeddedMetadataStore(tmp_path, 1)
    assert {t.name: t for t in reloaded.topics()} == {t.name: t for t in store.topics()}
    for name in [t.name for t in store.topics()]:
        store.delete_topic(name)
    assert json.loads(path.read_text())["topics"] == {}
    assert path.read_text() == _plain(store, path)
