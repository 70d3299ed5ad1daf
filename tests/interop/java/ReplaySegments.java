/*
 * Replays kafkacore's segment appends through Apache Kafka's own LogSegment, so the test
 * can compare the .log, .index and .timeindex files the two write byte for byte.
 *
 *   java -cp "<build dir>:<kafka libs>/*" ReplaySegments <plan file>
 *
 * The plan is text, one command a line (paths without spaces):
 *
 *   segment <dir> <base offset> <index.interval.bytes> <segment.index.bytes>
 *   append <source file> <position> <length> <largest offset>
 *   close
 *
 * "append" reads <length> bytes at <position> of <source file> (the batches as kafkacore
 * wrote them, offsets and timestamps already assigned) and hands them to
 * LogSegment.append(largestOffset, records): one call per kafkacore Segment.append call,
 * so multi-batch appends stay multi-batch. "close" is LogSegment.close(), which, like
 * kafkacore's close(), adds the final time-index entry and trims both indexes.
 */

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogSegment;

public final class ReplaySegments {

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: ReplaySegments <plan file>");
            System.exit(2);
        }
        List<String> plan = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        LogSegment segment = null;
        int segments = 0;
        for (String line : plan) {
            String[] f = line.trim().split("\\s+");
            switch (f[0]) {
                case "" -> { }
                case "segment" -> {
                    if (segment != null)
                        throw new IllegalStateException("segment before close: " + line);
                    Path dir = Path.of(f[1]);
                    Files.createDirectories(dir);
                    Map<String, Object> props = new HashMap<>();
                    props.put(TopicConfig.INDEX_INTERVAL_BYTES_CONFIG, Integer.parseInt(f[3]));
                    props.put(TopicConfig.SEGMENT_INDEX_BYTES_CONFIG, Integer.parseInt(f[4]));
                    segment = LogSegment.open(dir.toFile(), Long.parseLong(f[2]), new LogConfig(props),
                        Time.SYSTEM, 0, false);
                    // Kafka creates the index files lazily; kafkacore creates them on open.
                    segment.offsetIndex();
                    segment.timeIndex();
                    segments++;
                }
                case "append" -> {
                    byte[] bytes = new byte[Integer.parseInt(f[3])];
                    try (RandomAccessFile source = new RandomAccessFile(f[1], "r")) {
                        source.seek(Long.parseLong(f[2]));
                        source.readFully(bytes);
                    }
                    segment.append(Long.parseLong(f[4]), MemoryRecords.readableRecords(ByteBuffer.wrap(bytes)));
                }
                case "close" -> {
                    segment.close();
                    segment = null;
                }
                default -> throw new IllegalArgumentException("unknown plan command: " + line);
            }
        }
        if (segment != null)
            throw new IllegalStateException("plan ends without close");
        System.out.println(segments + " segments replayed");
    }
}
