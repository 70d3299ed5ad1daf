/*
 * Replays __cluster_metadata records into Apache Kafka's own MetadataDelta and writes the
 * MetadataImage back out, for tests/interop/test_metadata_image_vs_kafka.py.
 *
 *   java -cp "<build dir>:<kafka libs>/*" MetadataImages -
 *
 * One request per line of stdin, one answer per line (LineServer):
 *
 *   reset                      the image becomes MetadataImage.EMPTY; answers "ok"
 *   batch <offset> <hex>,...   the framed records (MetadataRecordSerde) replayed into one
 *                              MetadataDelta over the image, applied with the last
 *                              record's offset as provenance; "ok". A record Kafka cannot
 *                              replay answers "err ..." and leaves the image as it was.
 *   snapshot <offset> <hex>,...  the same, then finishSnapshot (the image is replaced)
 *   write                      MetadataImage.write with the options Kafka's snapshots use
 *                              (ImageWriterOptions.Builder(image)): "ok <hex>,..." of the
 *                              records, framed with MetadataRecordSerde
 */

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.image.writer.ImageWriterOptions;
import org.apache.kafka.image.writer.RecordListWriter;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;

public final class MetadataImages {

    private static final HexFormat HEX = HexFormat.of();
    private static MetadataImage image = MetadataImage.EMPTY;

    private MetadataImages() {}

    private static ApiMessageAndVersion read(String hex) {
        byte[] frame = HEX.parseHex(hex);
        return MetadataRecordSerde.INSTANCE.read(new ByteBufferAccessor(ByteBuffer.wrap(frame)), frame.length);
    }

    private static String frame(ApiMessageAndVersion record) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = MetadataRecordSerde.INSTANCE.recordSize(record, cache);
        ByteBuffer buf = ByteBuffer.allocate(size);
        MetadataRecordSerde.INSTANCE.write(record, cache, new ByteBufferAccessor(buf));
        return HEX.formatHex(buf.array());
    }

    private static String replay(String rest, boolean snapshot) {
        String[] parts = rest.split(" ", 2);
        long offset = Long.parseLong(parts[0]);
        MetadataDelta delta = new MetadataDelta.Builder().setImage(image).build();
        if (parts.length > 1 && !parts[1].isEmpty()) {
            for (String hex : parts[1].split(",")) {
                delta.replay(read(hex).message());
            }
        }
        if (snapshot) {
            delta.finishSnapshot();
        }
        image = delta.apply(new MetadataProvenance(offset, 1, 0L, true));
        return "ok";
    }

    private static String write() {
        RecordListWriter writer = new RecordListWriter();
        image.write(writer, new ImageWriterOptions.Builder(image).build());
        List<String> frames = new ArrayList<>();
        for (ApiMessageAndVersion record : writer.records()) {
            frames.add(frame(record));
        }
        return "ok " + String.join(",", frames);
    }

    private static String one(String line) {
        if (line.equals("reset")) {
            image = MetadataImage.EMPTY;
            return "ok";
        }
        if (line.equals("write")) {
            return write();
        }
        if (line.startsWith("batch ")) {
            return replay(line.substring("batch ".length()), false);
        }
        if (line.startsWith("snapshot ")) {
            return replay(line.substring("snapshot ".length()), true);
        }
        throw new IllegalArgumentException("unknown request: " + line);
    }

    public static void main(String[] args) throws Exception {
        LineServer.serve(MetadataImages::one);
    }
}
