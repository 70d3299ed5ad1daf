import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Transactions through Kafka's own Java client (tests/txn/test_java_transactions.py), all
 * cases in one JVM: {@code TxnClient <bootstrap> <prefix>} prints one JSON object, a key per
 * case, with what the client observed (records read per isolation level, end offsets,
 * exception classes); the Python test asserts on it. Any unexpected exception fails the run.
 *
 * <ul>
 *   <li>{@code basic}: abort then commit over two partitions (Kafka's testBasicTransactions).
 *   <li>{@code open}: a transaction left open; read_committed's end offset, offsetsForTimes and
 *       position stop at the last stable offset; then it commits.
 *   <li>{@code offsets}: consume-transform-produce with sendOffsetsToTransaction and the
 *       consumer's group metadata: an aborted attempt, then a committed one.
 *   <li>{@code fencing}: a second producer with the same transactional.id fences the first.
 *   <li>{@code timeout}: transaction.timeout.ms 2000; the broker aborts, the producer is
 *       fenced (testFencingOnTransactionExpiration).
 * </ul>
 */
public final class TxnClient {
    private final String bootstrap;
    private final String prefix;
    private final Admin admin;

    private TxnClient(String bootstrap, String prefix) {
        this.bootstrap = bootstrap;
        this.prefix = prefix;
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        this.admin = Admin.create(props);
    }

    public static void main(String[] args) throws Exception {
        TxnClient client = new TxnClient(args[0], args[1]);
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Long> elapsedMs = new LinkedHashMap<>();
        try {
            out.put("transaction_version", client.transactionVersion());
            for (String name : List.of("basic", "open", "offsets", "fencing", "timeout")) {
                long start = System.nanoTime();
                out.put(name, client.runCase(name));
                elapsedMs.put(name, (System.nanoTime() - start) / 1_000_000);
            }
            out.put("elapsed_ms", elapsedMs);
        } finally {
            client.admin.close(Duration.ofSeconds(5));
        }
        System.out.println(new ObjectMapper().writeValueAsString(out));
    }

    // ------------------------------------------------------------------ helpers

    private String topic(String name, int partitions) throws Exception {
        String topic = prefix + "-" + name;
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        long deadline = System.currentTimeMillis() + 30_000;
        while (true) {
            try {
                var description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                if (description.partitions().size() == partitions
                        && description.partitions().stream().allMatch(p -> p.leader() != null)) {
                    return topic;
                }
            } catch (ExecutionException e) {
                // not known to the metadata yet
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException(topic + ": no leaders");
            }
            Thread.sleep(100);
        }
    }

    private KafkaProducer<String, String> producer(String transactionalId, int timeoutMs) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("transactional.id", transactionalId);
        props.put("max.block.ms", "30000");
        if (timeoutMs > 0) {
            props.put("transaction.timeout.ms", Integer.toString(timeoutMs));
        }
        KafkaProducer<String, String> producer =
                new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
        producer.initTransactions();
        return producer;
    }

    private KafkaProducer<String, String> plainProducer() {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private KafkaConsumer<String, String> consumer(String isolation, String group) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("isolation.level", isolation);
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "earliest");
        if (group != null) {
            props.put("group.id", group);
        }
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    private static List<TopicPartition> partitions(String topic, int count) {
        List<TopicPartition> out = new ArrayList<>();
        for (int p = 0; p < count; p++) {
            out.add(new TopicPartition(topic, p));
        }
        return out;
    }

    private static Map<String, Object> record(ConsumerRecord<String, String> r) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("partition", r.partition());
        out.put("offset", r.offset());
        out.put("value", r.value());
        return out;
    }

    /**
     * Everything {@code isolation} reads from offset 0 up to its end offsets, and those; first
     * waits until no transaction is open (a commit returns before the markers are written).
     */
    private Map<String, Object> readToEnd(String topic, int count, String isolation)
            throws InterruptedException {
        waitFor("no open transaction on " + topic, () ->
                endOffsets(topic, count, "read_committed").equals(endOffsets(topic, count, "read_uncommitted")));
        try (KafkaConsumer<String, String> consumer = consumer(isolation, null)) {
            List<TopicPartition> tps = partitions(topic, count);
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
            List<Object> records = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 20_000;
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException(isolation + " read of " + topic + " stuck");
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    records.add(record(r));
                }
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("records", records);
            out.put("end_offsets", endList(ends, tps));
            return out;
        }
    }

    private static List<Long> endList(Map<TopicPartition, Long> ends, List<TopicPartition> tps) {
        List<Long> out = new ArrayList<>();
        for (TopicPartition tp : tps) {
            out.add(ends.get(tp));
        }
        return out;
    }

    private static void waitFor(String what, Supplier<Boolean> probe) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 20_000;
        while (!probe.get()) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("gave up waiting for " + what);
            }
            Thread.sleep(100);
        }
    }

    private List<Long> endOffsets(String topic, int count, String isolation) {
        try (KafkaConsumer<String, String> consumer = consumer(isolation, null)) {
            List<TopicPartition> tps = partitions(topic, count);
            return endList(consumer.endOffsets(tps), tps);
        }
    }

    private long endOffset(String topic, String isolation) {
        return endOffsets(topic, 1, isolation).get(0);
    }

    /** A step that may fail. */
    private interface Action {
        void run() throws Exception;
    }

    /** The exception classes {@code action} fails with, outermost first (empty: it did not). */
    private static List<String> errorOf(Action action) {
        try {
            action.run();
            return List.of();
        } catch (Exception e) {
            return chain(e);
        }
    }

    /** The exception classes of a failure, outermost first, through its causes. */
    private static List<String> chain(Throwable e) {
        List<String> out = new ArrayList<>();
        for (Throwable t = e; t != null && out.size() < 5; t = t.getCause()) {
            out.add(t.getClass().getSimpleName());
        }
        return out;
    }

    private Map<String, Long> groupOffsets(String group, String topic) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> offsets =
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        Map<String, Long> out = new TreeMap<>();
        offsets.forEach((tp, om) -> {
            if (tp.topic().equals(topic) && om != null) {
                out.put(Integer.toString(tp.partition()), om.offset());
            }
        });
        return out;
    }

    /**
     * The cluster's finalized {@code transaction.version} (0 when not reported): at 2 the
     * client uses KIP-890's TV2 (an epoch bump per transaction), which changes the errors a
     * fenced or expired producer sees.
     */
    private short transactionVersion() throws Exception {
        var finalized = admin.describeFeatures().featureMetadata().get().finalizedFeatures();
        var level = finalized.get("transaction.version");
        return level == null ? 0 : level.maxVersionLevel();
    }

    // ------------------------------------------------------------------ cases

    private Map<String, Object> runCase(String name) throws Exception {
        switch (name) {
            case "basic":
                return basic();
            case "open":
                return open();
            case "offsets":
                return offsets();
            case "fencing":
                return fencing();
            case "timeout":
                return timeout();
            default:
                throw new IllegalArgumentException(name);
        }
    }

    private Map<String, Object> basic() throws Exception {
        String topic = topic("basic", 2);
        try (KafkaProducer<String, String> producer = producer(prefix + "-tx-basic", 0)) {
            producer.beginTransaction();
            for (int p = 0; p < 2; p++) {
                producer.send(new ProducerRecord<>(topic, p, null, "aborted-" + p));
            }
            producer.flush();
            producer.abortTransaction();
            producer.beginTransaction();
            for (int p = 0; p < 2; p++) {
                producer.send(new ProducerRecord<>(topic, p, null, "committed-" + p));
            }
            producer.commitTransaction();
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("read_committed", readToEnd(topic, 2, "read_committed"));
        out.put("read_uncommitted", readToEnd(topic, 2, "read_uncommitted"));
        return out;
    }

    private Map<String, Object> open() throws Exception {
        String topic = topic("open", 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        long old = System.currentTimeMillis() - 60_000;
        try (KafkaProducer<String, String> plain = plainProducer()) {
            for (int i = 0; i < 2; i++) {
                plain.send(new ProducerRecord<>(topic, 0, old + i, null, "plain-" + i)).get();
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        try (KafkaProducer<String, String> producer = producer(prefix + "-tx-open", 0);
                KafkaConsumer<String, String> reader = consumer("read_committed", null)) {
            producer.beginTransaction();
            long opened = System.currentTimeMillis();
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>(topic, 0, opened + i, null, "open-" + i));
            }
            producer.flush();
            out.put("end_offset_read_committed", reader.endOffsets(List.of(tp)).get(tp));
            out.put("end_offset_read_uncommitted", endOffset(topic, "read_uncommitted"));
            OffsetAndTimestamp hit = reader.offsetsForTimes(Map.of(tp, opened)).get(tp);
            out.put("offset_for_open_time", hit == null ? null : hit.offset());
            reader.assign(List.of(tp));
            reader.seekToEnd(List.of(tp));
            out.put("position_after_seek_to_end", reader.position(tp));
            reader.seekToBeginning(List.of(tp));
            List<Object> seen = new ArrayList<>();
            long until = System.currentTimeMillis() + 1_500;
            while (System.currentTimeMillis() < until) {
                for (ConsumerRecord<String, String> r : reader.poll(Duration.ofMillis(200))) {
                    seen.add(record(r));
                }
            }
            out.put("seen_while_open", seen);
            out.put("position_while_open", reader.position(tp));
            // the lag the consumer computes from the Fetch response's LastStableOffset
            var lag = reader.currentLag(tp);
            out.put("lag_while_open", lag.isPresent() ? lag.getAsLong() : null);
            producer.commitTransaction();
        }
        out.put("after_commit", readToEnd(topic, 1, "read_committed"));
        return out;
    }

    private Map<String, Object> offsets() throws Exception {
        String source = topic("offsets-in", 1);
        String sink = topic("offsets-out", 1);
        String group = prefix + "-offsets-group";
        TopicPartition in = new TopicPartition(source, 0);
        try (KafkaProducer<String, String> plain = plainProducer()) {
            for (int i = 0; i < 10; i++) {
                plain.send(new ProducerRecord<>(source, 0, null, "in-" + i));
            }
            plain.flush();
        }
        Map<String, Object> out = new LinkedHashMap<>();
        List<Object> attempts = new ArrayList<>();
        try (KafkaProducer<String, String> producer = producer(prefix + "-tx-offsets", 0);
                KafkaConsumer<String, String> consumer = consumer("read_committed", group)) {
            consumer.subscribe(List.of(source));
            for (boolean commit : new boolean[] {false, true}) {
                List<ConsumerRecord<String, String>> batch = new ArrayList<>();
                long deadline = System.currentTimeMillis() + 30_000;
                while (batch.size() < 10) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("consumed only " + batch.size());
                    }
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                    records.forEach(batch::add);
                }
                producer.beginTransaction();
                for (ConsumerRecord<String, String> r : batch) {
                    producer.send(new ProducerRecord<>(sink, 0, null, r.value().replace("in-", "out-")));
                }
                Map<TopicPartition, OffsetAndMetadata> positions =
                        Map.of(in, new OffsetAndMetadata(consumer.position(in)));
                producer.sendOffsetsToTransaction(positions, consumer.groupMetadata());
                producer.flush();
                Map<String, Object> attempt = new LinkedHashMap<>();
                attempt.put("group_offsets_before_end", groupOffsets(group, source));
                if (commit) {
                    producer.commitTransaction();
                    waitFor("group offsets", () -> {
                        try {
                            return !groupOffsets(group, source).isEmpty();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    });
                } else {
                    producer.abortTransaction();
                    Thread.sleep(500); // time for an (incorrect) commit to show
                }
                attempt.put("group_offsets_after_end", groupOffsets(group, source));
                attempt.put("committed", commit);
                attempts.add(attempt);
                // rewind to the group's offsets, as an application does after an abort
                OffsetAndMetadata committed = consumer.committed(Set.of(in)).get(in);
                consumer.seek(in, committed == null ? 0 : committed.offset());
            }
        }
        out.put("attempts", attempts);
        out.put("output_read_committed", readToEnd(sink, 1, "read_committed"));
        out.put("output_read_uncommitted", readToEnd(sink, 1, "read_uncommitted"));
        return out;
    }

    private Map<String, Object> fencing() throws Exception {
        String topic = topic("fencing", 1);
        String id = prefix + "-tx-fencing";
        Map<String, Object> out = new LinkedHashMap<>();
        KafkaProducer<String, String> zombie = producer(id, 0);
        zombie.beginTransaction();
        zombie.send(new ProducerRecord<>(topic, 0, null, "zombie-0"));
        zombie.flush();
        // bumps the epoch and aborts the zombie's open transaction
        try (KafkaProducer<String, String> successor = producer(id, 0)) {
            successor.beginTransaction();
            successor.send(new ProducerRecord<>(topic, 0, null, "successor"));
            out.put("zombie_error", errorOf(() -> {
                Future<RecordMetadata> sent = zombie.send(new ProducerRecord<>(topic, 0, null, "zombie-1"));
                zombie.commitTransaction();
                sent.get();
            }));
            // an abortable error (InvalidProducerEpochException) or a fatal one: either way
            // the zombie can no longer end a transaction
            out.put("zombie_abort_error", errorOf(zombie::abortTransaction));
            zombie.close(Duration.ZERO);
            successor.commitTransaction();
        }
        out.put("read_committed", readToEnd(topic, 1, "read_committed"));
        out.put("read_uncommitted", readToEnd(topic, 1, "read_uncommitted"));
        return out;
    }

    private Map<String, Object> timeout() throws Exception {
        String topic = topic("timeout", 1);
        String id = prefix + "-tx-timeout";
        Map<String, Object> out = new LinkedHashMap<>();
        try (KafkaProducer<String, String> producer = producer(id, 2000)) {
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, null, "expired"));
            producer.flush();
            // the broker aborts it: the record, then its ABORT marker
            waitFor("the broker's abort marker", () -> endOffset(topic, "read_uncommitted") == 2);
            out.put("commit_error", errorOf(producer::commitTransaction));
            producer.close(Duration.ZERO);
        }
        try (KafkaProducer<String, String> successor = producer(id, 0)) {
            successor.beginTransaction();
            successor.send(new ProducerRecord<>(topic, 0, null, "after"));
            successor.commitTransaction();
        }
        out.put("read_committed", readToEnd(topic, 1, "read_committed"));
        return out;
    }
}
