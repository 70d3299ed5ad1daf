import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Kafka's own consumer reading a topic from the beginning (all its partitions assigned,
 * no group) until it has {@code count} records, or 60 s pass; prints "consumed N".
 * Args: bootstrap topic count. Small fetch waits make it send many Fetch requests, which
 * it sends as incremental fetch-session requests when the broker gives it a session.
 */
public final class SessionConsumer {
    private SessionConsumer() {
    }

    public static void main(String[] args) {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        props.put("fetch.max.wait.ms", "50");
        props.put("max.poll.records", "50");
        props.put("max.partition.fetch.bytes", "2048");
        props.put("enable.auto.commit", "false");
        String topic = args[1];
        long wanted = Long.parseLong(args[2]);
        long consumed = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(topic, Duration.ofSeconds(30))) {
                partitions.add(new TopicPartition(topic, info.partition()));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.currentTimeMillis() + 60_000;
            while (consumed < wanted && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                consumed += records.count();
            }
        }
        System.out.println("consumed " + consumed);
    }
}
