/*
 * Writes transactional data with Apache Kafka's own classes, for kafkacore to read:
 *
 *   java -cp "<build dir>:<kafka libs>/*" TxnData <out dir>
 *
 * <out>/txn-0/00000000000000000000.log: transactional batches of two producers
 * (MemoryRecords.withTransactionalRecords, one gzip), the first producer's COMMIT marker
 * and the second's ABORT marker (MemoryRecords.withEndTransactionMarker), and beside it
 * 00000000000000000000.txnindex with the aborted transaction (TransactionIndex.append).
 *
 * <out>/__transaction_state-10/00000000000000000000.log: TransactionLogKey/Value records
 * as the transaction coordinator serializes them (the generated messages, version-prefixed
 * by MessageUtil): a v0 value with partitions, a v0 Empty value (null partitions), a v1
 * value with every tagged field set, a v1 value at the tagged defaults, and a tombstone.
 *
 * The layout (offsets, producer ids, epochs) is fixed; the Python test states it too.
 */

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogKey;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogValue;
import org.apache.kafka.storage.internals.log.AbortedTxn;
import org.apache.kafka.storage.internals.log.TransactionIndex;

public final class TxnData {

    private static final long T0 = 1_700_000_000_000L;
    private static final String SEGMENT = "00000000000000000000";

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: TxnData <out dir>");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        writeTransactions(out.resolve("txn-0"));
        writeTransactionState(out.resolve("__transaction_state-10"));
    }

    private static SimpleRecord record(long ts, String key, String value) {
        return new SimpleRecord(ts, bytes(key), bytes(value));
    }

    private static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    private static void writeTransactions(Path dir) throws IOException {
        Files.createDirectories(dir);
        write(dir.resolve(SEGMENT + ".log"),
            MemoryRecords.withTransactionalRecords(0L, Compression.NONE, 1000L, (short) 2, 0, 5,
                record(T0, "a", "committed-a"), record(T0 + 1, "b", "committed-b")),
            MemoryRecords.withTransactionalRecords(2L, Compression.gzip().build(), 2000L, (short) 0, 0, 5,
                record(T0 + 2, "a", "aborted-a")),
            MemoryRecords.withEndTransactionMarker(3L, T0 + 3, 5, 1000L, (short) 2,
                new EndTransactionMarker(ControlRecordType.COMMIT, 7)),
            MemoryRecords.withEndTransactionMarker(4L, T0 + 4, 5, 2000L, (short) 0,
                new EndTransactionMarker(ControlRecordType.ABORT, 7)));
        TransactionIndex index = new TransactionIndex(0L, dir.resolve(SEGMENT + ".txnindex").toFile());
        index.append(new AbortedTxn(2000L, 2L, 4L, 5L));
        index.flush();
        index.close();
    }

    private static SimpleRecord txnRecord(long ts, String transactionalId, TransactionLogValue value, int version) {
        byte[] key = MessageUtil.toVersionPrefixedBytes((short) 0,
            new TransactionLogKey().setTransactionalId(transactionalId));
        byte[] v = value == null ? null : MessageUtil.toVersionPrefixedBytes((short) version, value);
        return new SimpleRecord(ts, key, v);
    }

    private static void writeTransactionState(Path dir) throws IOException {
        Files.createDirectories(dir);
        TransactionLogValue ongoing = new TransactionLogValue()
            .setProducerId(1000L).setProducerEpoch((short) 2).setTransactionTimeoutMs(60000)
            .setTransactionStatus((byte) 1)
            .setTransactionPartitions(List.of(
                new TransactionLogValue.PartitionsSchema().setTopic("txn").setPartitionIds(List.of(0, 3)),
                new TransactionLogValue.PartitionsSchema().setTopic("__consumer_offsets").setPartitionIds(List.of(17))))
            .setTransactionLastUpdateTimestampMs(T0 + 10).setTransactionStartTimestampMs(T0);
        TransactionLogValue empty = new TransactionLogValue()
            .setProducerId(2000L).setProducerEpoch((short) 0).setTransactionTimeoutMs(900000)
            .setTransactionStatus((byte) 0).setTransactionPartitions(null)
            .setTransactionLastUpdateTimestampMs(T0 + 20).setTransactionStartTimestampMs(-1L);
        TransactionLogValue tagged = new TransactionLogValue()
            .setProducerId(3000L).setPreviousProducerId(2999L).setNextProducerId(3001L)
            .setProducerEpoch((short) 32767).setNextProducerEpoch((short) 0)
            .setTransactionTimeoutMs(10000).setTransactionStatus((byte) 2)
            .setTransactionPartitions(List.of(
                new TransactionLogValue.PartitionsSchema().setTopic("out").setPartitionIds(List.of(1))))
            .setTransactionLastUpdateTimestampMs(T0 + 30).setTransactionStartTimestampMs(T0 + 25)
            .setClientTransactionVersion((short) 2);
        TransactionLogValue complete = new TransactionLogValue()
            .setProducerId(4000L).setProducerEpoch((short) 1).setTransactionTimeoutMs(60000)
            .setTransactionStatus((byte) 4).setTransactionPartitions(List.of())
            .setTransactionLastUpdateTimestampMs(T0 + 40).setTransactionStartTimestampMs(T0 + 35);
        write(dir.resolve(SEGMENT + ".log"),
            MemoryRecords.withRecords(0L, Compression.NONE,
                txnRecord(T0, "txn-1", ongoing, 0),
                txnRecord(T0 + 1, "my-transactional-id", empty, 0)),
            MemoryRecords.withRecords(2L, Compression.NONE,
                txnRecord(T0 + 2, "tagged-ü", tagged, 1),
                txnRecord(T0 + 3, "complete", complete, 1),
                txnRecord(T0 + 4, "txn-1", null, 0)));
    }

    private static void write(Path file, MemoryRecords... parts) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            for (MemoryRecords records : parts) {
                ByteBuffer buffer = records.buffer().duplicate();
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
            }
        }
    }
}
