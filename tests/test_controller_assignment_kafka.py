"""Replica assignment compared with Kafka 3.9.1's own ``AdminUtils.assignReplicasToBrokers``
(server-common jar): a small Java program runs a grid of cases (rack-unaware and
rack-aware, fixed start indexes, start partition ids, errors) and prints its results."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest

from kafkacore.placement import (
    AdminOperationError,
    BrokerMetadata,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    assign_replicas_to_brokers,
)
from support.kafka_jars import JVM_FLAGS, KAFKA_ZK_VERSION, require
from support.kafka_jars import kafka_libs as _kafka_libs

JAVA = r"""
import java.io.*;
import java.util.*;
import org.apache.kafka.admin.AdminUtils;
import org.apache.kafka.admin.BrokerMetadata;

public class Assign {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        StringBuilder out = new StringBuilder();
        while ((line = in.readLine()) != null) {
            String[] f = line.split(" ");
            List<BrokerMetadata> brokers = new ArrayList<>();
            for (String b : f[0].split(",")) {
                String[] idRack = b.split(":");
                Optional<String> rack =
                    idRack.length > 1 ? Optional.of(idRack[1]) : Optional.empty();
                brokers.add(new BrokerMetadata(Integer.parseInt(idRack[0]), rack));
            }
            try {
                Map<Integer, List<Integer>> m = AdminUtils.assignReplicasToBrokers(brokers,
                    Integer.parseInt(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                    Integer.parseInt(f[4]));
                List<String> parts = new ArrayList<>();
                for (Integer p : new TreeMap<>(m).keySet()) {
                    StringBuilder s = new StringBuilder(p + "=");
                    List<Integer> rs = m.get(p);
                    for (int i = 0; i < rs.size(); i++)
                        s.append(i > 0 ? "," : "").append(rs.get(i));
                    parts.add(s.toString());
                }
                out.append(String.join(";", parts));
            } catch (Exception e) {
                out.append("ERR ").append(e.getClass().getSimpleName()).append(": ")
                    .append(e.getMessage());
            }
            out.append("\n");
        }
        System.out.print(out);
    }
}
"""

ERRORS = {
    InvalidReplicationFactorError: "InvalidReplicationFactorException",
    InvalidPartitionsError: "InvalidPartitionsException",
    AdminOperationError: "AdminOperationException",
}


@pytest.fixture(scope="module")
def kafka_libs() -> Path:
    return _kafka_libs(KAFKA_ZK_VERSION)


def cases() -> list[tuple[list[BrokerMetadata], int, int, int, int]]:
    out = []
    unaware = [
        [BrokerMetadata(i) for i in ids] for ids in ([0], [1, 2, 3], [0, 1, 2, 3, 4], [5, 10, 2, 7])
    ]
    racks6 = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
    racks_uneven = {0: "a", 1: "a", 2: "a", 3: "b", 4: "c", 5: "c", 6: "b"}
    aware = [
        [BrokerMetadata(b, r) for b, r in racks6.items()],
        [BrokerMetadata(b, r) for b, r in racks_uneven.items()],
        [BrokerMetadata(b, r) for b, r in {1: "x", 2: "y", 3: "x"}.items()],
    ]
    for brokers in unaware + aware:
        n = len(brokers)
        for parts, rf, start, first_pid in itertools.product(
            (1, 3, 7, 13), range(1, min(n, 4) + 1), range(n), (-1, 0, 5)
        ):
            out.append((brokers, parts, rf, start, first_pid))
    out.append((unaware[1], 3, 4, 0, -1))  # RF larger than brokers
    out.append((unaware[1], 0, 1, 0, -1))
    out.append((unaware[1], 1, 0, 0, -1))
    out.append(([BrokerMetadata(1, "a"), BrokerMetadata(2)], 1, 1, 0, -1))
    return out


def encode(brokers: list[BrokerMetadata], parts: int, rf: int, start: int, pid: int) -> str:
    bs = ",".join(f"{b.id}:{b.rack}" if b.rack else str(b.id) for b in brokers)
    return f"{bs} {parts} {rf} {start} {pid}"


def ours(brokers: list[BrokerMetadata], parts: int, rf: int, start: int, pid: int) -> str:
    try:
        m = assign_replicas_to_brokers(
            brokers, parts, rf, fixed_start_index=start, start_partition_id=pid
        )
    except (InvalidReplicationFactorError, InvalidPartitionsError, AdminOperationError) as exc:
        return f"ERR {ERRORS[type(exc)]}: {exc}"
    return ";".join(f"{p}=" + ",".join(map(str, m[p])) for p in sorted(m))


def test_assignment_matches_kafka(kafka_libs: Path, tmp_path: Path) -> None:
    javac, java = require("javac"), require("java")
    cp = ":".join(str(p) for p in sorted(kafka_libs.glob("*.jar")))
    (tmp_path / "Assign.java").write_text(JAVA)
    subprocess.run(
        [javac, "-cp", cp, "-d", str(tmp_path), str(tmp_path / "Assign.java")], check=True
    )
    grid = cases()
    proc = subprocess.run(
        [java, *JVM_FLAGS, "-cp", f"{tmp_path}:{cp}", "Assign"],
        input="".join(encode(*c) + "\n" for c in grid),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    theirs = proc.stdout.splitlines()
    assert len(theirs) == len(grid)
    mismatches = [
        (encode(*c), t, o) for c, t in zip(grid, theirs, strict=True) if (o := ours(*c)) != t
    ]
    assert mismatches == [], mismatches[:5]
    assert any("larger than available brokers: 3." in t for t in theirs)
