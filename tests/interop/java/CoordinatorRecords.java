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
 * Stream mode answers one record per line of stdin, flushed at once (LineServer):
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

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
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
        GROUP(new GroupCoordinatorRecordSerde(), "group"),
        SHARE(new ShareCoordinatorRecordSerde(), "share"),
        TRANSACTION(new TransactionCoordinatorRecordSerde(), "transaction");

        final CoordinatorRecordSerde serde;
        private final String converters;

        Coordinator(CoordinatorRecordSerde serde, String name) {
            this.serde = serde;
            this.converters = "org.apache.kafka.coordinator." + name + ".generated.CoordinatorRecordJsonConverters";
        }

        /** A static method of this coordinator's CoordinatorRecordJsonConverters. */
        private Object converter(String method, Class<?>[] types, Object... args) {
            try {
                return Class.forName(converters).getMethod(method, types).invoke(null, args);
            } catch (InvocationTargetException e) {
                throw e.getCause() instanceof RuntimeException
                    ? (RuntimeException) e.getCause() : new RuntimeException(e.getCause());
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }

        ApiMessage readKey(JsonNode node, short type) {
            return (ApiMessage) converter(
                "readRecordKeyFromJson", new Class<?>[] {JsonNode.class, short.class}, node, type);
        }

        ApiMessage readValue(JsonNode node, short type, short version) {
            return (ApiMessage) converter("readRecordValueFromJson",
                new Class<?>[] {JsonNode.class, short.class, short.class}, node, type, version);
        }

        JsonNode writeKey(ApiMessage key) {
            return (JsonNode) converter("writeRecordKeyAsJson", new Class<?>[] {ApiMessage.class}, key);
        }

        JsonNode writeValue(ApiMessage value, short version) {
            return (JsonNode) converter(
                "writeRecordValueAsJson", new Class<?>[] {ApiMessage.class, short.class}, value, version);
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

    public static void main(String[] args) throws IOException {
        if (args.length == 1 && args[0].equals("-")) {
            ObjectMapper mapper = new ObjectMapper();
            LineServer.serve(line -> one(mapper, line));
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
