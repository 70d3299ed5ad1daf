/*
 * Writes record batches with Apache Kafka's own MemoryRecordsBuilder, one file per case,
 * plus manifest.json: each case's builder inputs and what Kafka's own reader gets back
 * from the bytes (batch headers and deep records). kafkacore's interop tests parse every
 * file with both backends and rebuild the uncompressed ones byte for byte.
 *
 *   javac -cp "<kafka libs>/*" -d <build dir> BuildBatches.java
 *   java -cp "<build dir>:<kafka libs>/*" BuildBatches <output dir>
 *
 * Covers RecordBatch v2 with every codec (none, gzip, snappy with xerial framing, lz4,
 * zstd), CreateTime and LogAppendTime, null/empty keys and values, headers (null values,
 * non-ASCII keys), negative timestamp deltas, records without timestamps, offset gaps,
 * an overridden last offset, a delete horizon, idempotent and transactional producer
 * fields, COMMIT/ABORT control batches, blocks larger than each codec's block size; and
 * the legacy message sets v0 and v1, plain and wrapped in gzip, snappy and lz4 (zstd
 * does not exist for them), which Kafka 4.x still builds and reads.
 */

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.ByteBufferOutputStream;

public final class BuildBatches {

    /** One input record; offsets are absolute, as handed to appendWithOffset. */
    record Rec(long offset, long timestamp, byte[] key, byte[] value, Header[] headers) { }

    /** One builder configuration and its records. */
    static final class Case {
        String name;
        byte magic = RecordBatch.MAGIC_VALUE_V2;
        int codec;
        TimestampType timestampType = TimestampType.CREATE_TIME;
        long logAppendTime = RecordBatch.NO_TIMESTAMP;
        long baseOffset;
        long producerId = RecordBatch.NO_PRODUCER_ID;
        short producerEpoch = RecordBatch.NO_PRODUCER_EPOCH;
        int baseSequence = RecordBatch.NO_SEQUENCE;
        boolean transactional;
        boolean control;
        int partitionLeaderEpoch = RecordBatch.NO_PARTITION_LEADER_EPOCH;
        long deleteHorizonMs = RecordBatch.NO_TIMESTAMP;
        Long lastOffsetOverride;
        List<Rec> records = new ArrayList<>();

        Case(String name, int codec, long baseOffset) {
            this.name = name;
            this.codec = codec;
            this.baseOffset = baseOffset;
        }
    }

    static final String[] CODEC_NAMES = {"none", "gzip", "snappy", "lz4", "zstd"};
    static final long T0 = 1_700_000_000_000L;
    static final long LOG_APPEND_TIME = 1_700_000_123_456L;

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: BuildBatches <output dir>");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        Files.createDirectories(out);

        List<Case> cases = new ArrayList<>();
        v2Cases(cases);
        legacyCases(cases);

        StringBuilder json = new StringBuilder();
        json.append("{\"kafka_version\": ").append(str(AppInfoParser.getVersion())).append(",\n\"cases\": [");
        for (int i = 0; i < cases.size(); i++) {
            Case c = cases.get(i);
            byte[] bytes = build(c);
            Files.write(out.resolve(c.name + ".bin"), bytes);
            json.append(i == 0 ? "\n" : ",\n");
            manifestEntry(json, c, bytes);
        }
        json.append("\n]}\n");
        Files.writeString(out.resolve("manifest.json"), json.toString(), StandardCharsets.UTF_8);
        System.out.println(cases.size() + " cases written to " + out);
    }

    // ---------------------------------------------------------------- the cases

    static void v2Cases(List<Case> cases) {
        for (int codec = 0; codec < CODEC_NAMES.length; codec++) {
            for (TimestampType type : new TimestampType[] {TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME}) {
                Case c = new Case("v2_" + CODEC_NAMES[codec] + "_" + type.name.toLowerCase(), codec, 1000);
                c.timestampType = type;
                if (type == TimestampType.LOG_APPEND_TIME)
                    c.logAppendTime = LOG_APPEND_TIME;
                c.records = mixedRecords(c.baseOffset, 20, codec);
                cases.add(c);
            }
            // Larger than a gzip buffer, a snappy chunk (32 KiB) and an lz4 block (64 KiB):
            // compressible text and incompressible bytes (stored blocks in lz4 and zstd).
            Case big = new Case("v2_" + CODEC_NAMES[codec] + "_large", codec, 0);
            Random random = new Random(7 + codec);
            big.records.add(new Rec(0, T0, bytes("big-text"), text(random, 100_000), new Header[0]));
            big.records.add(new Rec(1, T0 + 1, null, noise(random, 70_000), new Header[0]));
            big.records.add(new Rec(2, T0 + 2, bytes("tail"), bytes("small"), new Header[0]));
            cases.add(big);
        }

        // Enough records for multi-byte varints in offset and timestamp deltas.
        for (int codec : new int[] {0, 1}) {
            Case many = new Case("v2_" + CODEC_NAMES[codec] + "_many", codec, 7_000_000_000L);
            for (int i = 0; i < 300; i++)
                many.records.add(new Rec(many.baseOffset + i, T0 + 1000L * i, bytes("k" + i),
                    bytes("value-" + i), new Header[0]));
            cases.add(many);
        }

        for (int codec : new int[] {0, 3}) {
            Case idem = new Case("v2_" + CODEC_NAMES[codec] + "_idempotent", codec, 42);
            idem.producerId = 4242;
            idem.producerEpoch = 7;
            idem.baseSequence = 100;
            idem.partitionLeaderEpoch = 12;
            idem.records = mixedRecords(idem.baseOffset, 5, codec);
            cases.add(idem);
        }

        Case txn = new Case("v2_none_transactional", 0, 77);
        txn.producerId = 9001;
        txn.producerEpoch = 3;
        txn.baseSequence = 0;
        txn.transactional = true;
        txn.partitionLeaderEpoch = 5;
        txn.records = mixedRecords(txn.baseOffset, 4, 0);
        cases.add(txn);

        int coordinatorEpoch = 17;
        for (ControlRecordType type : new ControlRecordType[] {ControlRecordType.COMMIT, ControlRecordType.ABORT}) {
            Case marker = new Case("v2_none_control_" + type.name().toLowerCase(), 0, 81);
            marker.producerId = 9001;
            marker.producerEpoch = 3;
            marker.transactional = true;
            marker.control = true;
            marker.partitionLeaderEpoch = 5;
            EndTransactionMarker m = new EndTransactionMarker(type, coordinatorEpoch++);
            marker.records.add(new Rec(marker.baseOffset, T0 + 99, array(type.recordKey()),
                array(m.serializeValue()), new Header[0]));
            cases.add(marker);
        }

        // A compacted-looking batch: the base offset below the first record, gaps between.
        Case gaps = new Case("v2_none_offset_gaps", 0, 500);
        long[] offsets = {502, 505, 506, 510};
        for (int i = 0; i < offsets.length; i++)
            gaps.records.add(new Rec(offsets[i], T0 + 10L * i, bytes("g" + i), bytes("gap-" + i), new Header[0]));
        cases.add(gaps);

        // The last offset kept after its record was removed (overrideLastOffset).
        Case last = new Case("v2_none_last_offset_override", 0, 2000);
        for (int i = 0; i < 6; i++)
            last.records.add(new Rec(2000 + i, T0 + i, bytes("l" + i), bytes("last-" + i), new Header[0]));
        last.lastOffsetOverride = 2009L;
        cases.add(last);

        // Delete horizon: baseTimestamp is the horizon, record deltas count from it.
        Case horizon = new Case("v2_none_delete_horizon", 0, 3000);
        horizon.deleteHorizonMs = T0 + 86_400_000L;
        for (int i = 0; i < 3; i++)
            horizon.records.add(new Rec(3000 + i, T0 + 5L * i, bytes("d" + i), i == 1 ? null : bytes("h-" + i),
                new Header[0]));
        cases.add(horizon);

        Case untimed = new Case("v2_none_no_timestamps", 0, 10);
        for (int i = 0; i < 3; i++)
            untimed.records.add(new Rec(10 + i, RecordBatch.NO_TIMESTAMP, null, bytes("untimed-" + i), new Header[0]));
        cases.add(untimed);
    }

    static void legacyCases(List<Case> cases) {
        // zstd is rejected for magic < 2 by the builder itself.
        for (byte magic : new byte[] {RecordBatch.MAGIC_VALUE_V0, RecordBatch.MAGIC_VALUE_V1}) {
            for (int codec = 0; codec <= 3; codec++) {
                Case c = new Case("v" + magic + "_" + CODEC_NAMES[codec], codec, 300);
                c.magic = magic;
                c.timestampType = magic == 0 ? TimestampType.NO_TIMESTAMP_TYPE : TimestampType.CREATE_TIME;
                c.records = legacyRecords(c.baseOffset, 6);
                cases.add(c);
            }
        }
        for (int codec : new int[] {0, 1}) {
            Case c = new Case("v1_" + CODEC_NAMES[codec] + "_logappendtime", codec, 400);
            c.magic = RecordBatch.MAGIC_VALUE_V1;
            c.timestampType = TimestampType.LOG_APPEND_TIME;
            c.logAppendTime = LOG_APPEND_TIME;
            c.records = legacyRecords(c.baseOffset, 4);
            cases.add(c);
        }
        // Wrapped sets with offset gaps: v1 inner offsets are relative, v0 absolute.
        for (byte magic : new byte[] {RecordBatch.MAGIC_VALUE_V0, RecordBatch.MAGIC_VALUE_V1}) {
            Case c = new Case("v" + magic + "_gzip_offset_gaps", 1, 600);
            c.magic = magic;
            c.timestampType = magic == 0 ? TimestampType.NO_TIMESTAMP_TYPE : TimestampType.CREATE_TIME;
            long[] offsets = {600, 603, 604, 609};
            for (int i = 0; i < offsets.length; i++)
                c.records.add(new Rec(offsets[i], T0 + 3L * i, bytes("o" + i), bytes("gap-" + i), new Header[0]));
            cases.add(c);
        }
    }

    /** Null, empty and plain keys and values; headers of every shape; timestamps that go back. */
    static List<Rec> mixedRecords(long baseOffset, int count, int salt) {
        List<Rec> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            byte[] key = switch (i % 4) {
                case 0 -> null;
                case 1 -> new byte[0];
                default -> bytes("key-" + i + "-" + salt);
            };
            byte[] value = switch (i % 5) {
                case 3 -> null;
                case 4 -> new byte[0];
                default -> bytes("value-" + i + "-" + "x".repeat(i * 3));
            };
            Header[] headers = switch (i % 3) {
                case 0 -> new Header[0];
                case 1 -> new Header[] {new RecordHeader("trace-id", bytes("t" + i))};
                default -> new Header[] {
                    new RecordHeader("h\u00e9ader-\u00fc", bytes("first")),
                    new RecordHeader("null-value", (byte[]) null),
                    new RecordHeader("h\u00e9ader-\u00fc", new byte[0]),
                };
            };
            // Every third record goes back in time: negative timestamp deltas.
            long timestamp = T0 + (i % 3 == 2 ? -1000L * i : 1000L * i);
            records.add(new Rec(baseOffset + i, timestamp, key, value, headers));
        }
        return records;
    }

    static List<Rec> legacyRecords(long baseOffset, int count) {
        List<Rec> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            byte[] key = i % 3 == 0 ? null : bytes("legacy-key-" + i);
            byte[] value = switch (i % 4) {
                case 2 -> null;
                case 3 -> new byte[0];
                default -> bytes("legacy-value-" + i);
            };
            records.add(new Rec(baseOffset + i, T0 + (i == 2 ? -500 : 100L * i), key, value, new Header[0]));
        }
        return records;
    }

    // ---------------------------------------------------------------- building and reading back

    static Compression compression(int codec) {
        return switch (codec) {
            case 0 -> Compression.NONE;
            case 1 -> Compression.gzip().build();
            case 2 -> Compression.snappy().build();
            case 3 -> Compression.lz4().build();
            case 4 -> Compression.zstd().build();
            default -> throw new IllegalArgumentException("codec " + codec);
        };
    }

    static byte[] build(Case c) {
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(
            new ByteBufferOutputStream(ByteBuffer.allocate(1024)), c.magic, compression(c.codec), c.timestampType,
            c.baseOffset, c.logAppendTime, c.producerId, c.producerEpoch, c.baseSequence, c.transactional,
            c.control, c.partitionLeaderEpoch, Integer.MAX_VALUE, c.deleteHorizonMs);
        for (Rec r : c.records) {
            if (c.control)
                builder.appendControlRecordWithOffset(r.offset(),
                    new org.apache.kafka.common.record.internal.SimpleRecord(r.timestamp(), r.key(), r.value()));
            else
                builder.appendWithOffset(r.offset(), r.timestamp(), r.key(), r.value(), r.headers());
        }
        if (c.lastOffsetOverride != null)
            builder.overrideLastOffset(c.lastOffsetOverride);
        MemoryRecords built = builder.build();
        ByteBuffer buffer = built.buffer();
        byte[] out = new byte[buffer.remaining()];
        buffer.duplicate().get(out);
        return out;
    }

    static void manifestEntry(StringBuilder json, Case c, byte[] bytes) {
        json.append("{\"name\": ").append(str(c.name))
            .append(", \"file\": ").append(str(c.name + ".bin"))
            .append(", \"size\": ").append(bytes.length)
            .append(", \"magic\": ").append(c.magic)
            .append(", \"codec\": ").append(c.codec)
            .append(", \"timestamp_type\": ").append(c.timestampType.id)
            .append(", \"log_append_time\": ").append(c.logAppendTime)
            .append(", \"base_offset\": ").append(c.baseOffset)
            .append(", \"producer_id\": ").append(c.producerId)
            .append(", \"producer_epoch\": ").append(c.producerEpoch)
            .append(", \"base_sequence\": ").append(c.baseSequence)
            .append(", \"transactional\": ").append(c.transactional)
            .append(", \"control\": ").append(c.control)
            .append(", \"partition_leader_epoch\": ").append(c.partitionLeaderEpoch)
            .append(", \"delete_horizon_ms\": ").append(c.deleteHorizonMs)
            .append(", \"last_offset_override\": ").append(c.lastOffsetOverride == null ? "null" : c.lastOffsetOverride)
            .append(",\n  \"records\": [");
        for (int i = 0; i < c.records.size(); i++) {
            Rec r = c.records.get(i);
            json.append(i == 0 ? "" : ", ");
            recordJson(json, r.offset(), r.timestamp(), r.key(), r.value(), r.headers());
        }
        json.append("],\n  \"kafka_batches\": [");
        MemoryRecords readBack = MemoryRecords.readableRecords(ByteBuffer.wrap(bytes));
        List<Record> deep = new ArrayList<>();
        int position = 0;
        boolean first = true;
        for (MutableRecordBatch batch : readBack.batches()) {
            json.append(first ? "" : ", ");
            first = false;
            json.append("{\"position\": ").append(position)
                .append(", \"size\": ").append(batch.sizeInBytes())
                .append(", \"magic\": ").append(batch.magic())
                .append(", \"base_offset\": ").append(batch.baseOffset())
                .append(", \"last_offset\": ").append(batch.lastOffset())
                .append(", \"crc\": ").append(batch.checksum())
                .append(", \"is_valid\": ").append(batch.isValid())
                .append(", \"codec\": ").append(batch.compressionType().id)
                .append(", \"timestamp_type\": ").append(batch.timestampType().id)
                .append(", \"max_timestamp\": ").append(batch.maxTimestamp())
                .append(", \"producer_id\": ").append(batch.producerId())
                .append(", \"producer_epoch\": ").append(batch.producerEpoch())
                .append(", \"base_sequence\": ").append(batch.baseSequence())
                .append(", \"partition_leader_epoch\": ").append(batch.partitionLeaderEpoch())
                .append(", \"transactional\": ").append(batch.isTransactional())
                .append(", \"control\": ").append(batch.isControlBatch())
                .append(", \"count\": ").append(batch.countOrNull() == null ? "null" : batch.countOrNull())
                .append('}');
            position += batch.sizeInBytes();
            for (Record record : batch)
                deep.add(record);
        }
        json.append("],\n  \"kafka_records\": [");
        for (int i = 0; i < deep.size(); i++) {
            Record r = deep.get(i);
            json.append(i == 0 ? "" : ", ");
            recordJson(json, r.offset(), r.timestamp(), r.hasKey() ? array(r.key()) : null,
                r.hasValue() ? array(r.value()) : null, r.headers());
        }
        json.append("]}");
    }

    static void recordJson(StringBuilder json, long offset, long timestamp, byte[] key, byte[] value, Header[] headers) {
        json.append('[').append(offset).append(", ").append(timestamp).append(", ")
            .append(hex(key)).append(", ").append(hex(value)).append(", [");
        for (int h = 0; h < headers.length; h++) {
            json.append(h == 0 ? "" : ", ").append('[').append(str(headers[h].key())).append(", ")
                .append(hex(headers[h].value())).append(']');
        }
        json.append("]]");
    }

    // ---------------------------------------------------------------- small helpers

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] array(ByteBuffer buffer) {
        ByteBuffer b = buffer.duplicate();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    static byte[] text(Random random, int size) {
        String[] words = {"kafka", "log", "segment", "batch", "record", "offset", "index", "leader", "replica"};
        StringBuilder sb = new StringBuilder(size + 16);
        while (sb.length() < size)
            sb.append(words[random.nextInt(words.length)]).append(random.nextInt(1000)).append(' ');
        return bytes(sb.substring(0, size));
    }

    static byte[] noise(Random random, int size) {
        byte[] out = new byte[size];
        random.nextBytes(out);
        return out;
    }

    static String hex(byte[] data) {
        if (data == null)
            return "null";
        StringBuilder sb = new StringBuilder(data.length * 2 + 2).append('"');
        for (byte b : data)
            sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        return sb.append('"').toString();
    }

    /** A JSON string literal; everything outside printable ASCII is \\u-escaped. */
    static String str(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\')
                sb.append('\\').append(ch);
            else if (ch < 0x20 || ch > 0x7e)
                sb.append(String.format("\\u%04x", (int) ch));
            else
                sb.append(ch);
        }
        return sb.append('"').toString();
    }
}
