import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;

import kafka.zk.AclChangeNode;
import kafka.zk.ResourceZNode;
import kafka.zk.ZkAclStore;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.security.authorizer.AclEntry;
import org.apache.zookeeper.data.Stat;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Kafka 3.9's ZooKeeper ACL codec (kafka.zk.ResourceZNode, ZkAclStore, ZkAclChangeStore),
 * for tests/interop/test_acl_vs_kafka.py. Input: a file of tab-separated lines (codes are
 * Kafka's int8 wire codes, bytes are base64):
 *
 *   path         <resourceType> <name> <patternType>
 *       prints   <znode path> TAB <change node path> TAB <change node bytes>
 *   decodechange <patternType> <bytes>
 *       prints   <resourceType> TAB <name> TAB <patternType>
 *   znode        <bytes>
 *       prints   the entries Kafka reads (principal,host,op,perm sorted, ';'-joined) TAB
 *                Kafka's own encoding of that set
 */
public final class AclZkCodec {
    private AclZkCodec() {}

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8);
        Base64.Encoder b64 = Base64.getEncoder();
        Base64.Decoder unb64 = Base64.getDecoder();
        StringBuilder out = new StringBuilder();
        for (String line : lines) {
            if (line.isEmpty()) continue;
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "path": {
                    ResourcePattern pattern = new ResourcePattern(ResourceType.fromCode(Byte.parseByte(f[1])),
                        f[2], PatternType.fromCode(Byte.parseByte(f[3])));
                    AclChangeNode change = ZkAclStore.apply(pattern.patternType()).changeStore()
                        .createChangeNode(pattern);
                    out.append(ResourceZNode.path(pattern)).append('\t').append(change.path()).append('\t')
                        .append(b64.encodeToString(change.bytes())).append('\n');
                    break;
                }
                case "decodechange": {
                    ResourcePattern p = ZkAclStore.apply(PatternType.fromCode(Byte.parseByte(f[1])))
                        .changeStore().decode(unb64.decode(f[2]));
                    out.append(p.resourceType().code()).append('\t').append(p.name()).append('\t')
                        .append(p.patternType().code()).append('\n');
                    break;
                }
                case "znode": {
                    scala.collection.immutable.Set<AclEntry> acls =
                        ResourceZNode.decode(unb64.decode(f[1]), new Stat()).acls();
                    List<String> entries = new ArrayList<>();
                    for (AclEntry e : CollectionConverters.asJava(acls)) {
                        entries.add(e.principal() + "," + e.host() + "," + e.operation().code() + ","
                            + e.permissionType().code());
                    }
                    Collections.sort(entries);
                    out.append(String.join(";", entries)).append('\t')
                        .append(b64.encodeToString(ResourceZNode.encode(acls))).append('\n');
                    break;
                }
                default:
                    throw new IllegalArgumentException("bad line: " + line);
            }
        }
        System.out.print(out);
        System.out.flush();
    }
}
