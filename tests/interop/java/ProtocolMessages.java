/*
 * Builds protocol messages with Apache Kafka's own generated *Data classes and
 * serializes them, for tests/interop/test_protocol_vs_kafka.py.
 *
 *   java ProtocolMessages -          one case per line on stdin, one answer per line
 *   java ProtocolMessages --errors   Kafka's Errors: "<code>\t<name>\t<default message>"
 *
 * A case is "<api key> <version> <request|response> <json>", or "<class> <version> data
 * <json>" for a message of org.apache.kafka.common.message that is no API's (e.g.
 * DefaultPrincipalData): the field values in the JSON form of Kafka's generated
 * *JsonConverter. Kafka's converter populates the *Data object (so every field the version
 * carries must be present with a value of the right type), Kafka serializes it
 * (ObjectSerializationCache + size + write to a ByteBufferAccessor), reads those bytes
 * back into a new object, and answers:
 *
 *   ok <hex of the serialized message> <the object read back, written by the JsonConverter>
 *   err <exception class>: <message>          (e.g. a version Kafka does not have)
 *
 * Each answer is flushed at once, so the test can drive one JVM case by case (LineServer).
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;

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
        short version = Short.parseShort(parts[1]);
        Class<?> dataClass;
        if (parts[2].equals("data")) {
            dataClass = Class.forName("org.apache.kafka.common.message." + parts[0]);
        } else {
            ApiMessageType type = ApiMessageType.fromApiKey(Short.parseShort(parts[0]));
            Message empty = parts[2].equals("request") ? type.newRequest() : type.newResponse();
            dataClass = empty.getClass();
        }
        Class<?> converter = Class.forName(dataClass.getName() + "JsonConverter");
        Method read = converter.getMethod("read", JsonNode.class, short.class);
        Method write = converter.getMethod("write", dataClass, short.class);
        JsonNode input = mapper.readTree(parts[3]);
        Message message = (Message) invoke(read, input, version);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = message.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(size);
        message.write(new ByteBufferAccessor(buf), cache, version);
        buf.flip();
        Message back = (Message) dataClass.getConstructor(Readable.class, short.class)
            .newInstance(new ByteBufferAccessor(buf.duplicate()), version);
        String json = mapper.writeValueAsString(invoke(write, back, version));
        return "ok " + hex(buf) + " " + json;
    }

    private static Object invoke(Method method, Object... args) throws Exception {
        try {
            return method.invoke(null, args);
        } catch (InvocationTargetException e) {
            throw (Exception) e.getCause();
        }
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        if (args.length == 1 && args[0].equals("--errors")) {
            for (Errors error : Errors.values()) {
                out.println(error.code() + "\t" + error.name() + "\t" + error.message());
            }
            out.flush();
            return;
        }
        if (args.length != 1 || !args[0].equals("-")) {
            System.err.println("usage: ProtocolMessages - | --errors");
            System.exit(2);
        }
        ObjectMapper mapper = new ObjectMapper();
        LineServer.serve(line -> one(mapper, line));
    }
}
