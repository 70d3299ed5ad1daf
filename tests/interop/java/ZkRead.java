import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import kafka.api.LeaderAndIsr;
import kafka.cluster.Broker;
import kafka.cluster.EndPoint;
import kafka.controller.LeaderIsrAndControllerEpoch;
import kafka.controller.ReplicaAssignment;
import kafka.coordinator.transaction.ZkProducerIdManager;
import kafka.zk.AdminZkClient;
import kafka.zk.BrokerInfo;
import kafka.zk.KafkaZkClient;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.feature.Features;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.LeaderRecoveryState;
import org.apache.kafka.server.common.ProducerIdsBlock;
import org.apache.zookeeper.client.ZKClientConfig;
import scala.Option;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Kafka 3.9's own kafka.zk.KafkaZkClient against the ZooKeeper our KafkaZkClient wrote to
 * (and the reverse), for tests/interop/test_zk_vs_kafka.py. Compiled against Kafka 3.9.1's
 * jars only (kafka.zk is gone in 4.x).
 *
 *   ZkRead read  <connect> <topic>...   prints what Kafka reads, as one JSON object
 *   ZkRead write <connect> <brokerId> <host> <port> <rack> <topic> <deletedTopic> <clusterId>
 *       writes with Kafka's client and AdminZkClient, prints one JSON line, then "READY",
 *       and keeps its session (the ephemeral nodes) until stdin closes
 *   ZkRead assign <partitions> <rf> <fixedStartIndex> <startPartitionId> <id[:rack]>...
 *       Kafka's default replica placement (AdminUtils.assignReplicasToBrokers)
 */
public final class ZkRead {
    private ZkRead() {}

    public static void main(String[] args) throws Exception {
        if (args[0].equals("assign")) {
            System.out.println(assign(args));
            return;
        }
        KafkaZkClient zk = KafkaZkClient.apply(args[1], false, 30000, 30000, 10, Time.SYSTEM,
            "kafkacore-interop", new ZKClientConfig(), "kafka.server", "SessionExpireListener",
            true, false);
        try {
            if (args[0].equals("read")) {
                List<String> topics = new ArrayList<>();
                for (int i = 2; i < args.length; i++) topics.add(args[i]);
                System.out.println(read(zk, topics));
            } else if (args[0].equals("write")) {
                System.out.println(write(zk, args));
                System.out.println("READY");
                System.out.flush();
                while (System.in.read() >= 0) {
                    // hold the session until the test closes our stdin
                }
            } else {
                throw new IllegalArgumentException("unknown command " + args[0]);
            }
        } finally {
            zk.close();
        }
        System.out.flush();
    }

    // --- Kafka reads ---------------------------------------------------------------------

    @SuppressWarnings("unchecked")
    static String read(KafkaZkClient zk, List<String> topicArgs) {
        Map<String, Object> out = new TreeMap<>();
        out.put("cluster_id", opt(zk.getClusterId()));

        List<Object> brokers = new ArrayList<>();
        Map<Broker, Object> epochs = CollectionConverters.asJava(zk.getAllBrokerAndEpochsInCluster());
        for (Broker b : CollectionConverters.asJava(zk.getAllBrokersInCluster())) {
            Map<String, Object> m = new TreeMap<>();
            m.put("id", b.id());
            List<Object> endpoints = new ArrayList<>();
            Map<String, Object> protocols = new TreeMap<>();
            for (EndPoint e : CollectionConverters.asJava(b.endPoints())) {
                endpoints.add(e.connectionString());
                protocols.put(e.listenerName().value(), e.securityProtocol().name);
            }
            m.put("endpoints", endpoints);
            m.put("listeners", protocols);
            m.put("rack", opt(b.rack()));
            m.put("epoch", epochs.get(b));
            Option<Broker> single = zk.getBroker(b.id());
            m.put("get_broker_same", single.isDefined() && single.get().equals(b));
            brokers.add(m);
        }
        out.put("brokers", brokers);
        out.put("broker_ids", CollectionConverters.asJava(zk.getSortedBrokerList()));

        out.put("topics", new TreeSet<>(CollectionConverters.asJava(zk.getAllTopicsInCluster(false))));
        scala.collection.immutable.Set<String> topics = scalaSet(new HashSet<>(topicArgs));

        Map<String, Object> assignments = new TreeMap<>();
        Map<TopicPartition, scala.collection.Seq<Object>> simple =
            CollectionConverters.asJava(zk.getReplicaAssignmentForTopics(topics));
        List<TopicPartition> partitions = new ArrayList<>(simple.keySet());
        for (Map.Entry<TopicPartition, scala.collection.Seq<Object>> e : simple.entrySet()) {
            ((Map<String, Object>) assignments.computeIfAbsent(e.getKey().topic(), t -> new TreeMap<>()))
                .put(Integer.toString(e.getKey().partition()), CollectionConverters.asJava(e.getValue()));
        }
        out.put("assignments", assignments);

        Map<String, Object> full = new TreeMap<>();
        for (Map.Entry<TopicPartition, ReplicaAssignment> e
                : CollectionConverters.asJava(zk.getFullReplicaAssignmentForTopics(topics)).entrySet()) {
            Map<String, Object> m = new TreeMap<>();
            m.put("replicas", CollectionConverters.asJava(e.getValue().replicas()));
            m.put("adding", CollectionConverters.asJava(e.getValue().addingReplicas()));
            m.put("removing", CollectionConverters.asJava(e.getValue().removingReplicas()));
            ((Map<String, Object>) full.computeIfAbsent(e.getKey().topic(), t -> new TreeMap<>()))
                .put(Integer.toString(e.getKey().partition()), m);
        }
        out.put("full_assignments", full);

        Map<String, Object> ids = new TreeMap<>();
        for (Map.Entry<String, Uuid> e : CollectionConverters.asJava(zk.getTopicIdsForTopics(topics)).entrySet()) {
            ids.put(e.getKey(), e.getValue().toString());
        }
        out.put("topic_ids", ids);

        Map<String, Object> states = new TreeMap<>();
        Map<TopicPartition, LeaderIsrAndControllerEpoch> got = CollectionConverters.asJava(
            zk.getTopicPartitionStates(CollectionConverters.asScala(partitions).toSeq()));
        for (Map.Entry<TopicPartition, LeaderIsrAndControllerEpoch> e : got.entrySet()) {
            LeaderAndIsr l = e.getValue().leaderAndIsr();
            Map<String, Object> m = new TreeMap<>();
            m.put("leader", l.leader());
            m.put("leader_epoch", l.leaderEpoch());
            m.put("isr", CollectionConverters.asJava(l.isr()));
            m.put("leader_recovery_state", (int) l.leaderRecoveryState().value());
            m.put("partition_epoch", l.partitionEpoch());
            m.put("controller_epoch", e.getValue().controllerEpoch());
            ((Map<String, Object>) states.computeIfAbsent(e.getKey().topic(), t -> new TreeMap<>()))
                .put(Integer.toString(e.getKey().partition()), m);
        }
        out.put("states", states);

        out.put("controller_id", opt(zk.getControllerId()));
        Option<Tuple2<Object, org.apache.zookeeper.data.Stat>> epoch = zk.getControllerEpoch();
        out.put("controller_epoch", epoch.isDefined()
            ? List.of(epoch.get()._1(), epoch.get()._2().getVersion()) : null);

        Map<String, Object> configs = new TreeMap<>();
        Map<String, Object> marked = new TreeMap<>();
        for (String t : topicArgs) {
            Properties props = zk.getEntityConfigs("topics", t);
            Map<String, Object> c = new TreeMap<>();
            for (String k : props.stringPropertyNames()) c.put(k, props.getProperty(k));
            configs.put(t, c);
            marked.put(t, zk.isTopicMarkedForDeletion(t));
        }
        out.put("configs", configs);
        out.put("marked_for_deletion", marked);
        out.put("topics_to_delete", new TreeSet<>(CollectionConverters.asJava(zk.getTopicDeletions())));

        List<Object> isr = new ArrayList<>();
        for (TopicPartition tp : CollectionConverters.asJava(
                zk.getPartitionsFromIsrChangeNotifications(zk.getAllIsrChangeNotifications()))) {
            isr.add(List.of(tp.topic(), tp.partition()));
        }
        out.put("isr_change_partitions", isr);
        return json(out);
    }

    // --- Kafka writes --------------------------------------------------------------------

    static String write(KafkaZkClient zk, String[] a) {
        int brokerId = Integer.parseInt(a[2]);
        String host = a[3];
        int port = Integer.parseInt(a[4]);
        String rack = a[5];
        String topic = a[6];
        String deleted = a[7];
        String clusterId = a[8];
        Map<String, Object> out = new TreeMap<>();
        zk.createTopLevelPaths();
        out.put("cluster_id", zk.createOrGetClusterId(clusterId));

        EndPoint plain = new EndPoint(host, port, ListenerName.forSecurityProtocol(SecurityProtocol.PLAINTEXT),
            SecurityProtocol.PLAINTEXT);
        EndPoint ssl = new EndPoint(host, port + 1, new ListenerName("INTERNAL"), SecurityProtocol.SSL);
        Broker broker = new Broker(brokerId, CollectionConverters.asScala(List.of(plain, ssl)).toSeq(),
            Option.apply(rack), Features.emptySupportedFeatures());
        out.put("broker_epoch", zk.registerBroker(new BrokerInfo(broker, 5, -1)));

        Tuple2<Object, Object> controller = zk.registerControllerAndIncrementControllerEpoch(brokerId);
        int controllerEpoch = (Integer) controller._1();
        int epochZkVersion = (Integer) controller._2();
        out.put("controller_epoch", List.of(controllerEpoch, epochZkVersion));

        AdminZkClient admin = new AdminZkClient(zk, Option.empty());
        Properties config = new Properties();
        config.setProperty("retention.ms", "12345");
        Map<Object, scala.collection.Seq<Object>> assignment = new HashMap<>();
        assignment.put(0, CollectionConverters.asScala(List.<Object>of(brokerId)).toSeq());
        assignment.put(1, CollectionConverters.asScala(List.<Object>of(brokerId)).toSeq());
        admin.createTopicWithAssignment(topic, config, scalaMap(assignment), true, true);
        admin.createTopicWithAssignment(deleted, new Properties(), scalaMap(assignment), true, true);
        admin.deleteTopic(deleted);

        Map<TopicPartition, LeaderIsrAndControllerEpoch> states = new HashMap<>();
        scala.collection.immutable.List<Object> isr =
            CollectionConverters.asScala(List.<Object>of(brokerId)).toList();
        states.put(new TopicPartition(topic, 0), new LeaderIsrAndControllerEpoch(
            LeaderAndIsr.apply(brokerId, 3, isr, LeaderRecoveryState.RECOVERED, 0), controllerEpoch));
        states.put(new TopicPartition(topic, 1), new LeaderIsrAndControllerEpoch(
            LeaderAndIsr.apply(brokerId, 4, isr, LeaderRecoveryState.RECOVERING, 0), controllerEpoch));
        zk.createTopicPartitionStatesRaw(scalaMap(states), epochZkVersion);

        Properties changed = new Properties();
        changed.setProperty("retention.ms", "777");
        changed.setProperty("cleanup.policy", "compact");
        admin.changeTopicConfig(topic, changed);

        Set<TopicPartition> isrChanges = new HashSet<>(List.of(new TopicPartition(topic, 0)));
        zk.propagateIsrChanges(CollectionConverters.asScala(isrChanges));

        ProducerIdsBlock block = ZkProducerIdManager.getNewProducerIdBlock(brokerId, zk, admin);
        out.put("producer_id_block", List.of(block.firstProducerId(), block.lastProducerId()));

        Map<String, Object> ids = new TreeMap<>();
        for (Map.Entry<String, Uuid> e : CollectionConverters.asJava(
                zk.getTopicIdsForTopics(scalaSet(Set.of(topic, deleted)))).entrySet()) {
            ids.put(e.getKey(), e.getValue().toString());
        }
        out.put("topic_ids", ids);
        return json(out);
    }

    // --- Kafka's replica placement -------------------------------------------------------

    static String assign(String[] a) {
        List<org.apache.kafka.admin.BrokerMetadata> brokers = new ArrayList<>();
        for (int i = 5; i < a.length; i++) {
            String[] idRack = a[i].split(":", 2);
            brokers.add(new org.apache.kafka.admin.BrokerMetadata(Integer.parseInt(idRack[0]),
                idRack.length > 1 ? java.util.Optional.of(idRack[1]) : java.util.Optional.empty()));
        }
        Map<Integer, List<Integer>> got = org.apache.kafka.admin.AdminUtils.assignReplicasToBrokers(
            brokers, Integer.parseInt(a[1]), Integer.parseInt(a[2]), Integer.parseInt(a[3]),
            Integer.parseInt(a[4]));
        return json(new TreeMap<>(got));
    }

    // --- helpers -------------------------------------------------------------------------

    static <T> scala.collection.immutable.Set<T> scalaSet(Set<T> s) {
        return scala.collection.immutable.Set$.MODULE$.from(CollectionConverters.asScala(s));
    }

    static <K, V> scala.collection.immutable.Map<K, V> scalaMap(Map<K, V> m) {
        return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(m));
    }

    static Object opt(Option<?> o) {
        return o.isDefined() ? o.get() : null;
    }

    static String json(Object v) {
        StringBuilder sb = new StringBuilder();
        write(sb, v);
        return sb.toString();
    }

    @SuppressWarnings("unchecked")
    static void write(StringBuilder sb, Object v) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof String) {
            sb.append('"');
            for (char c : ((String) v).toCharArray()) {
                if (c == '"' || c == '\\') sb.append('\\').append(c);
                else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
                else sb.append(c);
            }
            sb.append('"');
        } else if (v instanceof Number || v instanceof Boolean) {
            sb.append(v);
        } else if (v instanceof Map) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<Object, Object> e : ((Map<Object, Object>) v).entrySet()) {
                if (!first) sb.append(',');
                first = false;
                write(sb, String.valueOf(e.getKey()));
                sb.append(':');
                write(sb, e.getValue());
            }
            sb.append('}');
        } else if (v instanceof Iterable) {
            sb.append('[');
            boolean first = true;
            for (Object o : (Iterable<Object>) v) {
                if (!first) sb.append(',');
                first = false;
                write(sb, o);
            }
            sb.append(']');
        } else {
            write(sb, v.toString());
        }
    }

    static List<Object> sorted(List<Object> l) {
        List<Object> copy = new ArrayList<>(l);
        Collections.sort(copy, (x, y) -> x.toString().compareTo(y.toString()));
        return copy;
    }
}
