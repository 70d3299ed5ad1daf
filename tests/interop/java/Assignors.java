/*
 * Kafka's server-side assignors (UniformAssignor, RangeAssignor) in line mode: each line is
 * one case as JSON,
 *   {"assignor": "uniform"|"range", "type": "HOMOGENEOUS"|"HETEROGENEOUS",
 *    "topics": [[topicId, partitions], ...],
 *    "members": [{"id", "instance", "rack", "subscribed": [topicId, ...],
 *                 "assignment": [[topicId, [partition, ...]], ...]}, ...]}
 * where the members, their subscriptions and assignments fill Kafka's HashMaps and
 * HashSets in the order given (as the coordinator's TargetAssignmentBuilder hands them
 * over); the answer is the assignment as JSON in the iteration order of Kafka's result,
 *   [[memberId, [[topicId, [partition, ...]], ...]], ...]
 * or "err <exception>: <message>".
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

public final class Assignors {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Assignors() {}

    private static Optional<String> optional(JsonNode node) {
        return node == null || node.isNull() ? Optional.empty() : Optional.of(node.asText());
    }

    static String assign(String line) throws Exception {
        JsonNode req = JSON.readTree(line);
        Map<Uuid, Integer> partitions = new HashMap<>();
        for (JsonNode t : req.get("topics")) {
            partitions.put(Uuid.fromString(t.get(0).asText()), t.get(1).asInt());
        }
        SubscribedTopicDescriber describer = new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid topicId) {
                return partitions.getOrDefault(topicId, -1);
            }

            @Override
            public Set<String> racksForPartition(Uuid topicId, int partition) {
                return Set.of();
            }
        };
        Map<String, MemberSubscriptionAndAssignmentImpl> members = new HashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        for (JsonNode m : req.get("members")) {
            String memberId = m.get("id").asText();
            Set<Uuid> subscribed = new HashSet<>();
            for (JsonNode t : m.get("subscribed")) {
                subscribed.add(Uuid.fromString(t.asText()));
            }
            Map<Uuid, Set<Integer>> assignment = new HashMap<>();
            for (JsonNode tp : m.get("assignment")) {
                Uuid topicId = Uuid.fromString(tp.get(0).asText());
                Set<Integer> ps = new HashSet<>();
                for (JsonNode p : tp.get(1)) {
                    ps.add(p.asInt());
                    inverted.computeIfAbsent(topicId, k -> new HashMap<>()).put(p.asInt(), memberId);
                }
                assignment.put(topicId, ps);
            }
            members.put(memberId, new MemberSubscriptionAndAssignmentImpl(
                optional(m.get("rack")), optional(m.get("instance")), subscribed,
                new Assignment(assignment)));
        }
        ConsumerGroupPartitionAssignor assignor = "range".equals(req.get("assignor").asText())
            ? new RangeAssignor() : new UniformAssignor();
        GroupAssignment result = assignor.assign(
            new GroupSpecImpl(members, SubscriptionType.valueOf(req.get("type").asText()), inverted),
            describer);
        ArrayNode out = JSON.createArrayNode();
        for (Map.Entry<String, MemberAssignment> e : result.members().entrySet()) {
            ArrayNode member = out.addArray();
            member.add(e.getKey());
            ArrayNode topics = member.addArray();
            for (Map.Entry<Uuid, Set<Integer>> tp : e.getValue().partitions().entrySet()) {
                ArrayNode topic = topics.addArray();
                topic.add(tp.getKey().toString());
                ArrayNode ps = topic.addArray();
                for (int p : tp.getValue()) {
                    ps.add(p);
                }
            }
        }
        return JSON.writeValueAsString(out);
    }

    public static void main(String[] args) throws Exception {
        LineServer.serve(Assignors::assign);
    }
}
