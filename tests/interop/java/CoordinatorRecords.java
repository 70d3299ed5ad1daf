/*
 * Serializes coordinator records with Apache Kafka's own coordinator code, so the tests can
 * compare kafkacore's encoders with Kafka's byte for byte.
 *
 *   java -cp "<build dir>:<kafka libs>/*" CoordinatorRecords <cases.json> <out.txt>
 *   java -cp "<build dir>:<kafka libs>/*" CoordinatorRecords -
 *
 * File mode (__consumer_offsets only) reads one JSON object:
 *
 *   {"records": [{"type": 1, "key": {...}, "version": 3, "value": {...} or null}, ...],
 *    "groups": ["group-a", ...]}
 *
 * and writes one line per record, "<key hex> <value hex or ->", then one line per group
 * with its __consumer_offsets partition, as the coordinator maps it
 * (Utils.abs(groupId.hashCode()) % 50).
 *
 * Stream mode answers one record per line of stdin, flushed at once:
 *
 *   {"coordinator": "group"|"share"|"transaction", "type": 1, "key": {...},
 *    "version": 3, "value": {...} or null}
 *
 *   ok <key hex> <value hex or -> {"key": ..., "value": ... or null}
 *   err <exception class>: <message>
 *
 * The JSON answered is Kafka's reading of its own bytes (the coordinator's
 * CoordinatorRecordSerde.deserialize), written by the generated converters.
 *
 * In both modes a record's key and value are read with the coordinator's generated JSON
 * converters (CoordinatorRecordJsonConverters, the JSON DumpLogSegments prints) and
 * serialized with its CoordinatorRecordSerde: GroupCoordinatorRecordSerde,
 * ShareCoordinatorRecordSerde or TransactionCoordinatorRecordSerde.
 */

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;
import org.apache.kafka.coordinator.share.ShareCoordinatorRecordSerde;
import org.apache.kafka.coordinator.transaction.TransactionCoordinatorRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;

public final class CoordinatorRecords {

    private static final int OFFSETS_TOPIC_PARTITIONS = 50;
    private static final HexFormat HEX = HexFormat.of();

    private CoordinatorRecords() {}

    /** One coordinator's serde and generated JSON converters. */
    private enum Coordinator {
        GROUP(new GroupCoordinatorRecordSerde()),
        SHARE(new ShareCoordinatorRecordSerde()),
        TRANSACTION(new TransactionCoordinatorRecordSerde());

        final CoordinatorRecordSerde serde;

        Coordinator(CoordinatorRecordSerde serde) {
            this.serde = serde;
        }

        ApiMessage readKey(JsonNode node, short type) {
            switch (this) {
                case GROUP:
                    return org.apache.kafka.coordinator.group.generated.CoordinatorRecordJsonConverters
                        .readRecordKeyFromJson(node, type);
                case SHARE:
                    return org.apache.kafka.coordinator.share.generated.CoordinatorRecordJsonConverters
                        .readRecordKeyFromJson(node, type);
                default:
                    return org.apache.kafka.coordinator.transaction.generated.CoordinatorRecordJsonConverters
                        .readRecordKeyFromJson(node, type);
            }
        }

        ApiMessage readValue(JsonNode node, short type, short version) {
            switch (this) {
                case GROUP:
                    return org.apache.kafka.coordinator.group.generated.CoordinatorRecordJsonConverters
                        .readRecordValueFromJson(node, type, version);
                case SHARE:
                    return org.apache.kafka.coordinator.share.generated.CoordinatorRecordJsonConverters
                        .readRecordValueFromJson(node, type, version);
                default:
                    return org.apache.kafka.coordinator.transaction.generated.CoordinatorRecordJsonConverters
                        .readRecordValueFromJson(node, type, version);
            }
        }

        JsonNode writeKey(ApiMessage key) {
            switch (this) {
                case GROUP:
                    return org.apache.kafka.coordinator.group.generated.CoordinatorRecordJsonConverters
                        .writeRecordKeyAsJson(key);
                case SHARE:
                    return org.apache.kafka.coordinator.share.generated.CoordinatorRecordJsonConverters
                        .writeRecordKeyAsJson(key);
                default:
                    return org.apache.kafka.coordinator.transaction.generated.CoordinatorRecordJsonConverters
                        .writeRecordKeyAsJson(key);
            }
        }

        JsonNode writeValue(ApiMessage value, short version) {
            switch (this) {
                case GROUP:
                    return org.apache.kafka.coordinator.group.generated.CoordinatorRecordJsonConverters
                        .writeRecordValueAsJson(value, version);
                case SHARE:
                    return org.apache.kafka.coordinator.share.generated.CoordinatorRecordJsonConverters
                        .writeRecordValueAsJson(value, version);
                default:
                    return org.apache.kafka.coordinator.transaction.generated.CoordinatorRecordJsonConverters
                        .writeRecordValueAsJson(value, version);
            }
        }
    }

    private static CoordinatorRecord record(Coordinator coordinator, JsonNode c) {
        short type = (short) c.get("type").asInt();
        ApiMessage key = coordinator.readKey(c.get("key"), type);
        JsonNode valueNode = c.get("value");
        if (valueNode == null || valueNode.isNull()) {
            return CoordinatorRecord.tombstone(key);
        }
        short version = (short) c.get("version").asInt();
        ApiMessage value = coordinator.readValue(valueNode, type, version);
        return CoordinatorRecord.record(key, new ApiMessageAndVersion(value, version));
    }

    private static String one(ObjectMapper mapper, String line) throws IOException {
        JsonNode c = mapper.readTree(line);
        Coordinator coordinator = Coordinator.valueOf(c.get("coordinator").asText().toUpperCase());
        CoordinatorRecord record = record(coordinator, c);
        byte[] keyBytes = coordinator.serde.serializeKey(record);
        byte[] valueBytes = coordinator.serde.serializeValue(record);
        CoordinatorRecord back = coordinator.serde.deserialize(
            ByteBuffer.wrap(keyBytes), valueBytes == null ? null : ByteBuffer.wrap(valueBytes));
        ObjectNode json = JsonNodeFactory.instance.objectNode();
        json.set("key", coordinator.writeKey(back.key()));
        ApiMessageAndVersion value = back.value();
        json.set("value", value == null
            ? JsonNodeFactory.instance.nullNode()
            : coordinator.writeValue(value.message(), value.version()));
        return "ok " + HEX.formatHex(keyBytes) + " "
            + (valueBytes == null ? "-" : HEX.formatHex(valueBytes)) + " "
            + mapper.writeValueAsString(json);
    }

    private static void stream() throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String result;
            try {
                result = one(mapper, line);
            } catch (Exception e) {
                result = "err " + e.getClass().getName() + ": "
                    + String.valueOf(e.getMessage()).replace('\n', ' ');
            }
            out.println(result);
            out.flush();
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 1 && args[0].equals("-")) {
            stream();
            return;
        }
        if (args.length != 2) {
            System.err.println("usage: CoordinatorRecords <cases.json> <out.txt> | -");
            System.exit(2);
        }
        JsonNode cases = new ObjectMapper().readTree(Path.of(args[0]).toFile());
        CoordinatorRecordSerde serde = Coordinator.GROUP.serde;
        StringBuilder out = new StringBuilder();
        for (JsonNode c : cases.get("records")) {
            CoordinatorRecord record = record(Coordinator.GROUP, c);
            byte[] valueBytes = serde.serializeValue(record);
            out.append(HEX.formatHex(serde.serializeKey(record)))
                .append(' ')
                .append(valueBytes == null ? "-" : HEX.formatHex(valueBytes))
                .append('\n');
        }
        for (JsonNode group : cases.get("groups")) {
            out.append(Utils.abs(group.asText().hashCode()) % OFFSETS_TOPIC_PARTITIONS).append('\n');
        }
        Files.writeString(Path.of(args[1]), out.toString(), StandardCharsets.UTF_8);
    }
}
