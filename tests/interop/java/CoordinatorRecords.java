/*
 * Serializes __consumer_offsets records with Apache Kafka's own group coordinator code,
 * so the test can compare kafkacore's encoder with Kafka's byte for byte.
 *
 *   java -cp "<build dir>:<kafka libs>/*" CoordinatorRecords <cases.json> <out.txt>
 *
 * The input is a JSON object:
 *
 *   {"records": [{"type": 1, "key": {...}, "version": 3, "value": {...} or null}, ...],
 *    "groups": ["group-a", ...]}
 *
 * Each record's key and value are read with Kafka's generated JSON converters
 * (CoordinatorRecordJsonConverters, the same JSON DumpLogSegments prints) and serialized
 * with GroupCoordinatorRecordSerde; each group is mapped to its __consumer_offsets
 * partition as the coordinator does (Utils.abs(groupId.hashCode()) % 50). The output has
 * one line per record, "<key hex> <value hex or ->", then one line per group with its
 * partition.
 */

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.generated.CoordinatorRecordJsonConverters;
import org.apache.kafka.server.common.ApiMessageAndVersion;

public final class CoordinatorRecords {

    private static final int OFFSETS_TOPIC_PARTITIONS = 50;

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: CoordinatorRecords <cases.json> <out.txt>");
            System.exit(2);
        }
        JsonNode cases = new ObjectMapper().readTree(Path.of(args[0]).toFile());
        GroupCoordinatorRecordSerde serde = new GroupCoordinatorRecordSerde();
        HexFormat hex = HexFormat.of();
        StringBuilder out = new StringBuilder();
        for (JsonNode c : cases.get("records")) {
            short type = (short) c.get("type").asInt();
            ApiMessage key = CoordinatorRecordJsonConverters.readRecordKeyFromJson(c.get("key"), type);
            JsonNode valueNode = c.get("value");
            CoordinatorRecord record;
            if (valueNode == null || valueNode.isNull()) {
                record = CoordinatorRecord.tombstone(key);
            } else {
                short version = (short) c.get("version").asInt();
                ApiMessage value = CoordinatorRecordJsonConverters.readRecordValueFromJson(valueNode, type, version);
                record = CoordinatorRecord.record(key, new ApiMessageAndVersion(value, version));
            }
            byte[] valueBytes = serde.serializeValue(record);
            out.append(hex.formatHex(serde.serializeKey(record)))
                .append(' ')
                .append(valueBytes == null ? "-" : hex.formatHex(valueBytes))
                .append('\n');
        }
        for (JsonNode group : cases.get("groups")) {
            out.append(Utils.abs(group.asText().hashCode()) % OFFSETS_TOPIC_PARTITIONS).append('\n');
        }
        Files.writeString(Path.of(args[1]), out.toString(), StandardCharsets.UTF_8);
    }
}
