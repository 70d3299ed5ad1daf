import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Kafka's own consumer as one member of a group, for tests/support/group_members.py: the
 * same protocol as tests/compat/clients/group_member.py. Args: bootstrap group topic name
 * protocol (classic or consumer). It consumes in batches and commits each synchronously,
 * printing one JSON line per step: {"pending": id, "records": [[p, o], ...]} before the
 * commit, then {"committed": id} or {"failed": id, "error": "..."}; {"assigned": [...]}
 * when its assignment changes. SIGTERM (the JVM's shutdown hook) wakes the consumer up,
 * closes it (it leaves the group) and exits.
 */
public final class GroupMember {
    private GroupMember() {
    }

    private static void emit(String json) {
        System.out.println(json);
        System.out.flush();
    }

    public static void main(String[] args) throws InterruptedException {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[1]);
        props.put("client.id", args[3]);
        props.put("group.protocol", args[4]);
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "earliest");
        props.put("max.poll.records", "100");
        props.put("metadata.max.age.ms", "1000");
        String topic = args[2];
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
        CountDownLatch closed = new CountDownLatch(1);
        Thread main = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            consumer.wakeup();
            try {
                closed.await();
                main.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        consumer.subscribe(List.of(topic));
        long batch = 0;
        String assignment = "";
        try {
            while (true) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                Set<String> now = new TreeSet<>();
                for (TopicPartition tp : consumer.assignment()) {
                    now.add("[\"" + tp.topic() + "\", " + tp.partition() + "]");
                }
                String listed = "[" + String.join(", ", now) + "]";
                if (!listed.equals(assignment)) {
                    assignment = listed;
                    emit("{\"assigned\": " + listed + "}");
                }
                if (records.isEmpty()) {
                    continue;
                }
                batch++;
                List<String> seen = new ArrayList<>();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    seen.add("[" + r.partition() + ", " + r.offset() + "]");
                    offsets.put(new TopicPartition(r.topic(), r.partition()),
                        new OffsetAndMetadata(r.offset() + 1));
                }
                emit("{\"pending\": " + batch + ", \"records\": [" + String.join(", ", seen) + "]}");
                try {
                    consumer.commitSync(offsets);
                    emit("{\"committed\": " + batch + "}");
                } catch (WakeupException e) {
                    throw e;
                } catch (RuntimeException e) {
                    String error = e.getClass().getSimpleName();
                    emit("{\"failed\": " + batch + ", \"error\": \"" + error + "\"}");
                    for (TopicPartition tp : offsets.keySet()) {
                        if (consumer.assignment().contains(tp)) {
                            OffsetAndMetadata committed = consumer.committed(Set.of(tp)).get(tp);
                            consumer.seek(tp, committed == null ? 0 : committed.offset());
                        }
                    }
                }
            }
        } catch (WakeupException e) {
            // SIGTERM: leave the group
        } finally {
            consumer.close();
            emit("{\"closed\": 0}");
            closed.countDown();
        }
    }
}
