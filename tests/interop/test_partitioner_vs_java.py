"""``kafkacore.partitioner`` against Apache Kafka's own client code: for a few hundred
keys, ``Utils.murmur2``, ``Utils.toPositive`` and ``BuiltInPartitioner.partitionForKey``
from Kafka's kafka-clients jar give what our backends give, so keys land where the Java
producer would put them."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

import kafkacore.partitioner
from kafkacore.native import load_backend

pytestmark = pytest.mark.interop

PARTITION_COUNTS = (1, 2, 3, 7, 12, 100, 2**31 - 1)

# Reads hex keys (one per line; an empty line is the empty key) from stdin and prints,
# per key: murmur2, then partitionForKey for each partition count given as arguments.
PROGRAM = """
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.utils.Utils;

public final class Murmur2Keys {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(
            new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            byte[] key = HexFormat.of().parseHex(line);
            int hash = Utils.murmur2(key);
            out.append(hash).append(' ').append(Utils.toPositive(hash));
            for (String n : args) {
                out.append(' ').append(
                    BuiltInPartitioner.partitionForKey(key, Integer.parseInt(n)));
            }
            out.append('\\n');
        }
        System.out.print(out);
    }
}
"""


def _keys() -> list[bytes]:
    rng = random.Random(20240606)
    keys = [b"", b"a", b"ab", b"abc", b"abcd", b"user-42", "clé-ünïcode".encode()]
    keys += [rng.randbytes(n) for n in range(0, 70)]
    keys += [rng.randbytes(rng.randint(0, 300)) for _ in range(200)]
    keys += [f"order-{i}".encode() for i in range(100)]
    keys += [bytes([b]) * 5 for b in (0x00, 0x7F, 0x80, 0xFF)]
    return keys


def test_partitioner_matches_kafka_clients(kafka_libs: Path, tmp_path: Path) -> None:
    source = tmp_path / "Murmur2Keys.java"
    source.write_text(PROGRAM, encoding="utf-8")
    classpath = f"{kafka_libs}/*"
    subprocess.run(
        ["javac", "-cp", classpath, "-d", str(tmp_path), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    keys = _keys()
    proc = subprocess.run(
        [
            "java",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            f"{tmp_path}{os.pathsep}{classpath}",
            "Murmur2Keys",
            *map(str, PARTITION_COUNTS),
        ],
        input="".join(k.hex() + "\n" for k in keys).encode(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == len(keys)
    backends = {name: load_backend(name) for name in ("native", "pure")}
    for key, line in zip(keys, lines, strict=True):
        hash_, positive, *partitions = map(int, line.split())
        for name, backend in backends.items():
            assert backend.murmur2(key) == hash_, (name, key)
        assert kafkacore.partitioner.murmur2(key) == hash_
        assert kafkacore.partitioner.to_positive(hash_) == positive
        ours = [kafkacore.partitioner.partition_for_key(key, n) for n in PARTITION_COUNTS]
        assert ours == partitions, key
