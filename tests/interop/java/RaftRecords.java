/*
 * Builds KRaft's on-disk and in-log bytes with Apache Kafka's own classes, for
 * tests/interop/test_raft_vs_kafka.py:
 *
 *   java RaftRecords -
 *
 * In LineServer's line mode: each input line is a JSON object with a "kind":
 *
 *   {"kind": "message", "class": "LeaderChangeMessage", "version": 0, "data": {...}}
 *       the control message read by its JsonConverter and serialized at the version
 *   {"kind": "control", "class": "LeaderChangeMessage", "offset": 5, "time": 1, "epoch": 2, "data": {...}}
 *       MemoryRecords.with<Type>Record(...): the one-record control batch Kafka writes
 *   {"kind": "batch", "offset": 5, "time": 1, "epoch": 2, "values": ["a", "b"]}
 *       a data batch of the Raft BatchBuilder (values as UTF-8 strings, StringSerde)
 *   {"kind": "snapshot", "offset": 10, "epoch": 2, "time": 7, "lastContained": 6,
 *    "kraftVersion": 1, "voters": {...VotersRecord json...} or null, "values": ["a"]}
 *       a snapshot file written by RecordsSnapshotWriter at a fixed clock
 *   {"kind": "quorumstate", "kraftVersion": 1, "epoch": 3, "leaderId": 1, "votedId": -1,
 *    "votedDirectoryId": "...", "voters": [1, 2, 3]}
 *       the quorum-state file FileQuorumStateStore writes for that ElectionState
 *   {"kind": "readquorumstate", "text": "..."}
 *       the ElectionState FileQuorumStateStore reads back from a file holding "text"
 *
 * One answer line per input line: "ok <hex of the bytes>" (for quorumstate: of the file;
 * for snapshot: "<file name> <hex>"), "ok <text>" for readquorumstate, or "err <exception>".
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.KRaftVersionRecord;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.message.SnapshotFooterRecord;
import org.apache.kafka.common.message.SnapshotHeaderRecord;
import org.apache.kafka.common.message.VotersRecord;
import org.apache.kafka.common.message.VotersRecordJsonConverter;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.raft.ElectionState;
import org.apache.kafka.raft.FileQuorumStateStore;
import org.apache.kafka.raft.ReplicaKey;
import org.apache.kafka.raft.VoterSet;
import org.apache.kafka.raft.internals.BatchBuilder;
import org.apache.kafka.raft.internals.StringSerde;
import org.apache.kafka.server.common.KRaftVersion;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.snapshot.FileRawSnapshotWriter;
import org.apache.kafka.snapshot.RecordsSnapshotWriter;

public final class RaftRecords {
    private static final HexFormat HEX = HexFormat.of();

    private RaftRecords() {}

    private static Message readMessage(String className, JsonNode data, short version) throws Exception {
        Class<?> converter = Class.forName("org.apache.kafka.common.message." + className + "JsonConverter");
        Method read = converter.getMethod("read", JsonNode.class, short.class);
        try {
            return (Message) read.invoke(null, data, version);
        } catch (InvocationTargetException e) {
            throw (Exception) e.getCause();
        }
    }

    private static String hex(ByteBuffer buf) {
        byte[] bytes = new byte[buf.remaining()];
        buf.duplicate().get(bytes);
        return HEX.formatHex(bytes);
    }

    private static Time fixedTime(long ms) {
        return new Time() {
            @Override
            public long milliseconds() {
                return ms;
            }

            @Override
            public long nanoseconds() {
                return ms * 1_000_000L;
            }

            @Override
            public void sleep(long sleepMs) {}

            @Override
            public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {}
        };
    }

    private static String one(ObjectMapper mapper, JsonNode c, Path scratch) throws Exception {
        String kind = c.get("kind").asText();
        switch (kind) {
            case "message": {
                short version = (short) c.get("version").asInt();
                Message message = readMessage(c.get("class").asText(), c.get("data"), version);
                ObjectSerializationCache cache = new ObjectSerializationCache();
                ByteBuffer buf = ByteBuffer.allocate(message.size(cache, version));
                message.write(new ByteBufferAccessor(buf), cache, version);
                buf.flip();
                return hex(buf);
            }
            case "control": {
                String className = c.get("class").asText();
                long offset = c.get("offset").asLong();
                long time = c.get("time").asLong();
                int epoch = c.get("epoch").asInt();
                ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
                Message message = readMessage(className, c.get("data"), (short) 0);
                MemoryRecords records;
                switch (className) {
                    case "LeaderChangeMessage":
                        records = MemoryRecords.withLeaderChangeMessage(offset, time, epoch, buf, (LeaderChangeMessage) message);
                        break;
                    case "SnapshotHeaderRecord":
                        records = MemoryRecords.withSnapshotHeaderRecord(offset, time, epoch, buf, (SnapshotHeaderRecord) message);
                        break;
                    case "SnapshotFooterRecord":
                        records = MemoryRecords.withSnapshotFooterRecord(offset, time, epoch, buf, (SnapshotFooterRecord) message);
                        break;
                    case "KRaftVersionRecord":
                        records = MemoryRecords.withKRaftVersionRecord(offset, time, epoch, buf, (KRaftVersionRecord) message);
                        break;
                    case "VotersRecord":
                        records = MemoryRecords.withVotersRecord(offset, time, epoch, buf, (VotersRecord) message);
                        break;
                    default:
                        throw new IllegalArgumentException(className);
                }
                return hex(records.buffer());
            }
            case "batch": {
                ByteBuffer buf = ByteBuffer.allocate(1024 * 1024);
                BatchBuilder<String> builder = new BatchBuilder<>(
                    buf, new StringSerde(), Compression.NONE, c.get("offset").asLong(),
                    c.get("time").asLong(), c.get("epoch").asInt(), 1024 * 1024);
                ObjectSerializationCache cache = new ObjectSerializationCache();
                for (JsonNode value : c.get("values")) {
                    builder.appendRecord(value.asText(), cache);
                }
                return hex(builder.build().buffer());
            }
            case "snapshot": {
                OffsetAndEpoch id = new OffsetAndEpoch(c.get("offset").asLong(), c.get("epoch").asInt());
                Path dir = Files.createTempDirectory(scratch, "snapshot");
                JsonNode votersNode = c.get("voters");
                Optional<VoterSet> voters = votersNode == null || votersNode.isNull()
                    ? Optional.empty()
                    : Optional.of(VoterSet.fromVotersRecord(VotersRecordJsonConverter.read(votersNode, (short) 0)));
                try (RecordsSnapshotWriter<String> writer = new RecordsSnapshotWriter.Builder()
                        .setTime(fixedTime(c.get("time").asLong()))
                        .setLastContainedLogTimestamp(c.get("lastContained").asLong())
                        .setRawSnapshotWriter(FileRawSnapshotWriter.create(dir, id))
                        .setKraftVersion(KRaftVersion.fromFeatureLevel((short) c.get("kraftVersion").asInt()))
                        .setVoterSet(voters)
                        .build(new StringSerde())) {
                    List<String> values = new ArrayList<>();
                    for (JsonNode value : c.get("values")) {
                        values.add(value.asText());
                    }
                    if (!values.isEmpty()) {
                        writer.append(values);
                    }
                    writer.freeze();
                }
                Path file;
                try (var files = Files.list(dir)) {
                    file = files.filter(p -> p.toString().endsWith(".checkpoint")).findFirst().orElseThrow();
                }
                return file.getFileName() + " " + HEX.formatHex(Files.readAllBytes(file));
            }
            case "quorumstate": {
                Set<Integer> voters = new HashSet<>();
                for (JsonNode v : c.get("voters")) {
                    voters.add(v.asInt());
                }
                int epoch = c.get("epoch").asInt();
                int leaderId = c.get("leaderId").asInt();
                int votedId = c.get("votedId").asInt();
                Optional<ReplicaKey> voted = votedId < 0 ? Optional.empty()
                    : Optional.of(ReplicaKey.of(votedId, Uuid.fromString(c.get("votedDirectoryId").asText())));
                ElectionState state;
                if (leaderId >= 0) {
                    state = ElectionState.withElectedLeader(epoch, leaderId, voted, voters);
                } else if (voted.isPresent()) {
                    state = ElectionState.withVotedCandidate(epoch, voted.get(), voters);
                } else {
                    state = ElectionState.withUnknownLeader(epoch, voters);
                }
                Path file = Files.createTempDirectory(scratch, "qs").resolve("quorum-state");
                new FileQuorumStateStore(file.toFile()).writeElectionState(
                    state, KRaftVersion.fromFeatureLevel((short) c.get("kraftVersion").asInt()));
                return HEX.formatHex(Files.readAllBytes(file));
            }
            case "readquorumstate": {
                Path file = Files.createTempDirectory(scratch, "qs").resolve("quorum-state");
                Files.writeString(file, c.get("text").asText(), StandardCharsets.UTF_8);
                ElectionState state = new FileQuorumStateStore(file.toFile()).readElectionState().orElseThrow();
                return "epoch=" + state.epoch() + " leader=" + state.leaderIdOrSentinel()
                    + " voted=" + state.optionalVotedKey().map(k -> k.id() + ":"
                        + k.directoryId().map(Uuid::toString).orElse("-")).orElse("-");
            }
            default:
                throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        Path scratch = Files.createTempDirectory("raft-records");
        LineServer.serve(line -> "ok " + one(mapper, mapper.readTree(line), scratch));
    }
}
