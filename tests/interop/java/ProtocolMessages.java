/*
 * Builds protocol messages with Apache Kafka's own generated *Data classes and
 * serializes them, for tests/interop/test_protocol_vs_kafka.py.
 *
 *   java ProtocolMessages <cases file>
 *
 * Each input line is "<api key> <version> <request|response> <json>": the field values,
 * in the JSON form of Kafka's generated *JsonConverter. For each, Kafka's converter
 * populates the *Data object (so every field the version carries must be present with a
 * value of the right type), Kafka serializes it (ObjectSerializationCache + size + write
 * to a ByteBufferAccessor), and one output line is printed:
 *
 *   ok <hex of the serialized message> <the object written back by the JsonConverter>
 *   err <exception class>: <message>          (e.g. a version Kafka no longer supports)
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

public final class ProtocolMessages {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private ProtocolMessages() {}

    private static String hex(ByteBuffer buf) {
        StringBuilder sb = new StringBuilder(buf.remaining() * 2);
        while (buf.hasRemaining()) {
            int b = buf.get() & 0xff;
            sb.append(HEX[b >>> 4]).append(HEX[b & 0xf]);
        }
        return sb.toString();
    }

    private static String one(ObjectMapper mapper, String line) throws Exception {
        String[] parts = line.split(" ", 4);
        short key = Short.parseShort(parts[0]);
        short version = Short.parseShort(parts[1]);
        ApiMessageType type = ApiMessageType.fromApiKey(key);
        ApiMessage empty = parts[2].equals("request") ? type.newRequest() : type.newResponse();
        Class<?> dataClass = empty.getClass();
        Class<?> converter = Class.forName(dataClass.getName() + "JsonConverter");
        Method read = converter.getMethod("read", JsonNode.class, short.class);
        Method write = converter.getMethod("write", dataClass, short.class);
        JsonNode input = mapper.readTree(parts[3]);
        ApiMessage message;
        try {
            message = (ApiMessage) read.invoke(null, input, version);
        } catch (InvocationTargetException e) {
            throw (Exception) e.getCause();
        }
        // The converter first: serializing may consume a records buffer.
        JsonNode back = (JsonNode) write.invoke(null, message, version);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = message.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(size);
        message.write(new ByteBufferAccessor(buf), cache, version);
        buf.flip();
        return "ok " + hex(buf) + " " + mapper.writeValueAsString(back);
    }

    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        try (BufferedReader in = Files.newBufferedReader(Paths.get(args[0]), StandardCharsets.UTF_8)) {
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
            }
        }
        out.flush();
    }
}
