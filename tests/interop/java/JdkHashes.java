import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.timeline.SnapshotRegistry;
import org.apache.kafka.timeline.TimelineHashMap;

/**
 * The JDK's and Kafka's answers for kafkacore._java's differential test
 * (tests/interop/test_java_vs_jdk.py): one request per line on stdin, one answer line each.
 * Strings travel as the hex of their UTF-16 code units (4 digits each), so lone surrogates
 * cross intact; in a list (comma-separated, empty: no items) each is prefixed with 's'.
 *
 *   hash HEX              -> s.hashCode() s.length()
 *   tp HEX PARTITION      -> new TopicPartition(s, p).hashCode()
 *   abs INT               -> Utils.abs(n) Utils.toPositive(n)
 *   put CAP sHEX,...      -> HashMap (default if CAP < 0, else new HashMap<>(CAP)) filled with
 *                            put(key, index): the indexes in iteration order
 *   compute sHEX,...      -> new HashMap<>() filled with computeIfAbsent: the same
 *   set sHEX,...          -> new HashSet<>() filled with add: the first index of each key,
 *                            in iteration order
 *   intset INT,...        -> new HashSet<Integer>() filled with add: the ints in iteration order
 *   timeline OP,...       -> Kafka's TimelineHashMap (new TimelineHashMap<>(registry, 0)) after
 *                            each OP in turn: "+" puts, "-" removes a key, a key being "s" and
 *                            a string's hex or "i" and an int; the keys in iteration order,
 *                            each as it was written
 */
public final class JdkHashes {
    private JdkHashes() {}

    static String text(String hex) {
        char[] units = new char[hex.length() / 4];
        for (int i = 0; i < units.length; i++) {
            units[i] = (char) Integer.parseInt(hex.substring(4 * i, 4 * i + 4), 16);
        }
        return new String(units);
    }

    static List<String> texts(String field) {
        List<String> out = new ArrayList<>();
        if (field.isEmpty()) {
            return out;
        }
        for (String item : field.split(",", -1)) {
            out.add(text(item.substring(1)));
        }
        return out;
    }

    static String joined(Iterable<?> values) {
        StringBuilder sb = new StringBuilder();
        for (Object v : values) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(v);
        }
        return sb.toString();
    }

    static String answer(String[] f) {
        switch (f[0]) {
            case "hash": {
                String s = text(f[1]);
                return s.hashCode() + " " + s.length();
            }
            case "tp":
                return Integer.toString(new TopicPartition(text(f[1]), Integer.parseInt(f[2])).hashCode());
            case "abs": {
                int n = Integer.parseInt(f[1]);
                return Utils.abs(n) + " " + Utils.toPositive(n);
            }
            case "put": {
                int capacity = Integer.parseInt(f[1]);
                Map<String, Integer> map = capacity < 0 ? new HashMap<>() : new HashMap<>(capacity);
                List<String> keys = texts(f[2]);
                for (int i = 0; i < keys.size(); i++) {
                    map.put(keys.get(i), i);
                }
                return joined(map.values());
            }
            case "compute": {
                Map<String, Integer> map = new HashMap<>();
                List<String> keys = texts(f[1]);
                for (int i = 0; i < keys.size(); i++) {
                    final int index = i;
                    map.computeIfAbsent(keys.get(i), k -> index);
                }
                return joined(map.values());
            }
            case "set": {
                Map<String, Integer> first = new LinkedHashMap<>();
                HashSet<String> set = new HashSet<>();
                List<String> keys = texts(f[1]);
                for (int i = 0; i < keys.size(); i++) {
                    first.putIfAbsent(keys.get(i), i);
                    set.add(keys.get(i));
                }
                List<Integer> order = new ArrayList<>();
                for (String key : set) {
                    order.add(first.get(key));
                }
                return joined(order);
            }
            case "intset": {
                HashSet<Integer> set = new HashSet<>();
                if (!f[1].isEmpty()) {
                    for (String n : f[1].split(",", -1)) {
                        set.add(Integer.parseInt(n));
                    }
                }
                return joined(set);
            }
            case "timeline": {
                TimelineHashMap<Object, String> map =
                    new TimelineHashMap<>(new SnapshotRegistry(new LogContext()), 0);
                if (!f[1].isEmpty()) {
                    for (String op : f[1].split(",", -1)) {
                        String written = op.substring(1);
                        Object key = written.charAt(0) == 's'
                            ? text(written.substring(1))
                            : Integer.valueOf(Integer.parseInt(written.substring(1)));
                        if (op.charAt(0) == '+') {
                            map.put(key, written);
                        } else {
                            map.remove(key);
                        }
                    }
                }
                return joined(map.values());
            }
            default:
                throw new IllegalArgumentException("unknown request " + f[0]);
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
        String line;
        while ((line = in.readLine()) != null) {
            out.println(answer(line.split(" ", -1)));
            out.flush();
        }
    }
}
