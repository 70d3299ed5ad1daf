/*
 * Frames __cluster_metadata records with Apache Kafka's own MetadataRecordSerde, and reads
 * frames with it, for tests/interop/test_metadata_records_vs_kafka.py.
 *
 *   java -cp "<build dir>:<kafka libs>/*" MetadataRecords -
 *
 * One request per line of stdin, one answer per line, flushed at once (LineServer):
 *
 *   {"type": 3, "version": 2, "record": {...}}
 *       The record is read with Kafka's generated converters (MetadataJsonConverters, the
 *       JSON kafka-dump-log --cluster-metadata-decoder prints), framed with
 *       MetadataRecordSerde (frame version, api key, version, message), and the frame read
 *       back with MetadataRecordSerde:
 *       ok <frame hex> <the record read back, as JSON>
 *   decode <hex>
 *       MetadataRecordSerde.read of the frame:
 *       ok <type> <version> <record as JSON>
 *
 * Either answers "err <exception class>: <message>" when Kafka throws.
 */

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HexFormat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.common.metadata.MetadataJsonConverters;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;

public final class MetadataRecords {

    private static final HexFormat HEX = HexFormat.of();

    private MetadataRecords() {}

    private static ApiMessageAndVersion read(byte[] frame) {
        ByteBuffer buf = ByteBuffer.wrap(frame);
        return MetadataRecordSerde.INSTANCE.read(new ByteBufferAccessor(buf), frame.length);
    }

    private static String json(ObjectMapper mapper, ApiMessageAndVersion record) throws IOException {
        return mapper.writeValueAsString(MetadataJsonConverters.writeJson(record.message(), record.version()));
    }

    private static String one(ObjectMapper mapper, String line) throws IOException {
        if (line.startsWith("decode ")) {
            ApiMessageAndVersion record = read(HEX.parseHex(line.substring("decode ".length())));
            return "ok " + record.message().apiKey() + " " + record.version() + " " + json(mapper, record);
        }
        JsonNode c = mapper.readTree(line);
        short type = (short) c.get("type").asInt();
        short version = (short) c.get("version").asInt();
        ApiMessage message = MetadataJsonConverters.readJson(c.get("record"), type, version);
        ApiMessageAndVersion record = new ApiMessageAndVersion(message, version);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = MetadataRecordSerde.INSTANCE.recordSize(record, cache);
        ByteBuffer buf = ByteBuffer.allocate(size);
        MetadataRecordSerde.INSTANCE.write(record, cache, new ByteBufferAccessor(buf));
        byte[] frame = buf.array();
        return "ok " + HEX.formatHex(frame) + " " + json(mapper, read(frame));
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1 || !args[0].equals("-")) {
            System.err.println("usage: MetadataRecords -");
            System.exit(2);
        }
        ObjectMapper mapper = new ObjectMapper();
        LineServer.serve(line -> one(mapper, line));
    }
}
