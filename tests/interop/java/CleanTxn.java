/*
 * Compacts partition directories with Apache Kafka's own log cleaner (UnifiedLog +
 * Cleaner.doClean, as Kafka's LogCleanerTest drives it), so the test can compare its
 * files with kafkacore's cleaner's on the same input:
 *
 *   java -cp "<build dir>:<kafka libs>/*" CleanTxn <spec file>
 *
 * One line per partition: "<dir> <recovery point> <load time ms> <t1>,<t2>,..." followed
 * by the topic configs as "key=value" words. Each partition is opened as Kafka's broker
 * opens it after a clean shutdown (producer state from its snapshots, the .txnindex
 * files as they are), its high watermark set to the log end, then cleaned once per time
 * t: the whole log (first dirty offset 0) up to the smaller of the active segment's base
 * offset and the first unstable offset, at currentTime t. Prints, per partition, the end
 * offset of each round.
 */

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.Cleaner;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogToClean;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.SkimpyOffsetMap;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.utils.Throttler;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

public final class CleanTxn {

    /** A clock that only moves when told to. */
    static final class SetTime implements Time {
        volatile long now;

        @Override
        public long milliseconds() {
            return now;
        }

        @Override
        public long nanoseconds() {
            return now * 1_000_000L;
        }

        @Override
        public void sleep(long ms) {
            now += ms;
        }

        @Override
        public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
            if (!condition.get()) {
                throw new IllegalStateException("CleanTxn's clock does not wait");
            }
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: CleanTxn <spec file>");
            System.exit(2);
        }
        KafkaScheduler scheduler = new KafkaScheduler(1);
        scheduler.startup();
        BrokerTopicStats stats = new BrokerTopicStats();
        try {
            for (String line : Files.readAllLines(Path.of(args[0]))) {
                if (!line.isBlank()) {
                    clean(line.trim().split(" "), scheduler, stats);
                }
            }
        } finally {
            scheduler.shutdown();
            stats.close();
        }
    }

    private static void clean(String[] words, KafkaScheduler scheduler, BrokerTopicStats stats) throws Exception {
        File dir = new File(words[0]);
        long recoveryPoint = Long.parseLong(words[1]);
        SetTime time = new SetTime();
        time.now = Long.parseLong(words[2]);
        Map<String, Object> props = new HashMap<>();
        for (int i = 4; i < words.length; i++) {
            String[] kv = words[i].split("=", 2);
            props.put(kv[0], kv[1]);
        }
        UnifiedLog log = UnifiedLog.create(dir, new LogConfig(props), 0L, recoveryPoint, scheduler, stats,
            time, 300_000, new ProducerStateManagerConfig(86_400_000, false), 600_000,
            new LogDirFailureChannel(10), true, Optional.empty());
        try {
            log.updateHighWatermark(log.logEndOffset());
            Cleaner cleaner = new Cleaner(0, new SkimpyOffsetMap(4 * 1024 * 1024), 64 * 1024,
                1024 * 1024 + 12, 0.9, new Throttler(Double.MAX_VALUE, 300, "cleaner-io", "bytes", time),
                time, tp -> { });
            StringBuilder ends = new StringBuilder(dir.getName());
            for (String t : words[3].split(",")) {
                time.now = Long.parseLong(t);
                long uncleanable = Math.min(log.activeSegment().baseOffset(),
                    log.firstUnstableOffset().orElse(log.logEndOffset()));
                long end = cleaner.doClean(new LogToClean(log, 0L, uncleanable, false), time.now).getKey();
                ends.append(' ').append(end);
            }
            System.out.println(ends);
        } finally {
            log.close();
        }
    }
}
