import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Kafka's own KafkaShareConsumer against a broker: {@code consumers} share consumers of
 * one group poll {@code topic} until {@code expected} records were accepted (or the time is
 * up), acknowledging explicitly as {@code policy} says, and print one line per delivery:
 * {@code <consumer> <partition> <offset> <delivery count> <ack type>}, one line
 * {@code poll <consumer> <records>} per non-empty poll, then {@code done}.
 *
 * <p>Policies: {@code accept} accepts everything; {@code release} releases each record
 * whose offset is a multiple of 5 until its third delivery; {@code reject} rejects odd
 * offsets; {@code implicit} runs in implicit acknowledgement mode (every record accepted
 * by the next poll); {@code renew} renews each record's lock once before accepting it.
 * {@code acquireMode}: batch_optimized or record_limit (KIP-1206), {@code maxRecords}.
 *
 * <p>Usage: {@code ShareConsumers <bootstrap> <group> <topic> <consumers> <expected>
 * <policy> <acquireMode> <maxRecords> <timeoutMs>}
 */
public final class ShareConsumers {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String group = args[1];
        String topic = args[2];
        int consumers = Integer.parseInt(args[3]);
        int expected = Integer.parseInt(args[4]);
        String policy = args[5];
        String acquireMode = args[6];
        int maxRecords = Integer.parseInt(args[7]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[8]);
        AtomicInteger accepted = new AtomicInteger();
        ConcurrentHashMap<Long, Boolean> done = new ConcurrentHashMap<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < consumers; i++) {
            final int index = i;
            Thread t = new Thread(() -> run(index, bootstrap, group, topic, expected, policy,
                acquireMode, maxRecords, deadline, accepted, done));
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        System.out.println("done");
    }

    private static void run(int index, String bootstrap, String group, String topic,
                            int expected, String policy, String acquireMode, int maxRecords,
                            long deadline, AtomicInteger accepted,
                            ConcurrentHashMap<Long, Boolean> done) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("share.acknowledgement.mode", policy.equals("implicit") ? "implicit" : "explicit");
        p.put("share.acquire.mode", acquireMode);
        p.put("max.poll.records", Integer.toString(maxRecords));
        try (KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(p)) {
            c.subscribe(List.of(topic));
            while (done.size() < expected && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = c.poll(Duration.ofMillis(500));
                if (records.count() > 0) {
                    synchronized (ShareConsumers.class) {
                        System.out.println("poll " + index + " " + records.count());
                    }
                }
                for (ConsumerRecord<String, String> r : records) {
                    short count = r.deliveryCount().orElse((short) 0);
                    AcknowledgeType type = AcknowledgeType.ACCEPT;
                    if (policy.equals("release") && r.offset() % 5 == 0 && count < 3) {
                        type = AcknowledgeType.RELEASE;
                    } else if (policy.equals("reject") && r.offset() % 2 == 1) {
                        type = AcknowledgeType.REJECT;
                    }
                    if (policy.equals("renew")) {
                        c.acknowledge(r, AcknowledgeType.RENEW);
                    } else if (!policy.equals("implicit")) {
                        c.acknowledge(r, type);
                    }
                    if (type != AcknowledgeType.RELEASE) {
                        done.put(r.offset(), Boolean.TRUE);
                    }
                    synchronized (ShareConsumers.class) {
                        System.out.println(index + " " + r.partition() + " " + r.offset() + " "
                            + count + " " + (policy.equals("implicit") ? "ACCEPT" : type));
                        System.out.flush();
                    }
                }
                if (policy.equals("renew")) {
                    c.commitSync();
                    for (ConsumerRecord<String, String> r : records) {
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                }
                if (!policy.equals("implicit")) {
                    c.commitSync();
                }
            }
        }
    }
}
