import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.SecurityUtils;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.security.authorizer.AclEntry;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;

/**
 * Kafka's StandardAuthorizer (3.9 or 4.x jars) deciding a list of requests over an ACL set, for
 * tests/interop/test_acl_vs_kafka.py. Input: a file of tab-separated lines (codes are
 * Kafka's int8 wire codes, "~" is null):
 *
 *   reset                    (a new authorizer for the lines that follow)
 *   config    <super.users>  <allow.everyone.if.no.acl.found>
 *   acl       <resourceType> <name> <patternType> <principal> <host> <operation> <permission>
 *   authorize <principal> <host> <operation> <resourceType> <name>
 *   describe  <resourceType> <name|~> <patternType> <principal|~> <host|~> <operation> <permission>
 *   bytype    <principal> <host> <operation> <resourceType>   (authorizeByResourceType)
 *   supported <resourceType>  (prints "supported <op codes, sorted, ','-joined> <error code>")
 *
 * Output: one line per authorize (ALLOWED / DENIED) and, per describe, a line
 * "describe <n>" followed by the n matching bindings in the acl line format, sorted.
 */
public final class AclDecisions {
    private AclDecisions() {}

    private static String nul(String field) {
        return "~".equals(field) ? null : field;
    }

    private static AuthorizableRequestContext context(String principal, String host) throws Exception {
        final KafkaPrincipal kafkaPrincipal = SecurityUtils.parseKafkaPrincipal(principal);
        final InetAddress address = InetAddress.getByName(host);
        return new AuthorizableRequestContext() {
            @Override public String listenerName() { return "PLAINTEXT"; }
            @Override public SecurityProtocol securityProtocol() { return SecurityProtocol.PLAINTEXT; }
            @Override public KafkaPrincipal principal() { return kafkaPrincipal; }
            @Override public InetAddress clientAddress() { return address; }
            @Override public int requestType() { return 0; }
            @Override public int requestVersion() { return 0; }
            @Override public String clientId() { return "acl-decisions"; }
            @Override public int correlationId() { return 0; }
        };
    }

    /** Kafka 4.x's StandardAuthorizer records metrics and needs them set (KIP-877); 3.9's has no such hook. */
    private static void withPluginMetrics(StandardAuthorizer authorizer) throws Exception {
        Class<?> pluginMetrics;
        try {
            pluginMetrics = Class.forName("org.apache.kafka.common.metrics.PluginMetrics");
        } catch (ClassNotFoundException e) {
            return;
        }
        Object metrics = Class.forName("org.apache.kafka.common.metrics.internals.PluginMetricsImpl")
            .getConstructor(Metrics.class, Map.class)
            .newInstance(new Metrics(), new HashMap<String, String>());
        StandardAuthorizer.class.getMethod("withPluginMetrics", pluginMetrics).invoke(authorizer, metrics);
    }

    private static String format(AclBinding binding) {
        ResourcePattern p = binding.pattern();
        AccessControlEntry e = binding.entry();
        return String.join("\t", "acl", Byte.toString(p.resourceType().code()), p.name(),
            Byte.toString(p.patternType().code()), e.principal(), e.host(),
            Byte.toString(e.operation().code()), Byte.toString(e.permissionType().code()));
    }

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8);
        StandardAuthorizer authorizer = null;
        Map<String, Object> configs = new HashMap<>();
        List<String> pendingAcls = new ArrayList<>();
        StringBuilder out = new StringBuilder();
        for (String line : lines) {
            if (line.isEmpty()) continue;
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "reset":
                    authorizer = null;
                    configs.clear();
                    pendingAcls.clear();
                    break;
                case "config":
                    if (!"~".equals(f[1])) configs.put(StandardAuthorizer.SUPER_USERS_CONFIG, f[1]);
                    configs.put(StandardAuthorizer.ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG, f[2]);
                    break;
                case "acl":
                    pendingAcls.add(line);
                    break;
                case "supported": {
                    ResourceType type = ResourceType.fromCode(Byte.parseByte(f[1]));
                    List<Integer> codes = new ArrayList<>();
                    for (AclOperation op : AclEntry.supportedOperations(type)) codes.add((int) op.code());
                    Collections.sort(codes);
                    StringBuilder joined = new StringBuilder();
                    for (Integer c : codes) joined.append(joined.length() == 0 ? "" : ",").append(c);
                    out.append("supported ").append(joined).append(' ')
                        .append(AclEntry.authorizationError(type).code()).append('\n');
                    break;
                }
                case "authorize":
                case "bytype":
                case "describe":
                    if (authorizer == null) {
                        authorizer = new StandardAuthorizer();
                        withPluginMetrics(authorizer);
                        authorizer.configure(configs);
                        for (String acl : pendingAcls) {
                            String[] a = acl.split("\t", -1);
                            AclBinding binding = new AclBinding(
                                new ResourcePattern(ResourceType.fromCode(Byte.parseByte(a[1])), a[2],
                                    PatternType.fromCode(Byte.parseByte(a[3]))),
                                new AccessControlEntry(a[4], a[5], AclOperation.fromCode(Byte.parseByte(a[6])),
                                    AclPermissionType.fromCode(Byte.parseByte(a[7]))));
                            authorizer.addAcl(Uuid.randomUuid(), StandardAcl.fromAclBinding(binding));
                        }
                        authorizer.completeInitialLoad();
                    }
                    if (f[0].equals("bytype")) {
                        out.append(authorizer.authorizeByResourceType(context(f[1], f[2]),
                            AclOperation.fromCode(Byte.parseByte(f[3])),
                            ResourceType.fromCode(Byte.parseByte(f[4]))).name()).append('\n');
                    } else if (f[0].equals("authorize")) {
                        Action action = new Action(AclOperation.fromCode(Byte.parseByte(f[3])),
                            new ResourcePattern(ResourceType.fromCode(Byte.parseByte(f[4])), f[5], PatternType.LITERAL),
                            1, true, true);
                        AuthorizationResult result = authorizer.authorize(context(f[1], f[2]),
                            Collections.singletonList(action)).get(0);
                        out.append(result.name()).append('\n');
                    } else {
                        AclBindingFilter filter = new AclBindingFilter(
                            new ResourcePatternFilter(ResourceType.fromCode(Byte.parseByte(f[1])), nul(f[2]),
                                PatternType.fromCode(Byte.parseByte(f[3]))),
                            new AccessControlEntryFilter(nul(f[4]), nul(f[5]),
                                AclOperation.fromCode(Byte.parseByte(f[6])),
                                AclPermissionType.fromCode(Byte.parseByte(f[7]))));
                        List<String> found = new ArrayList<>();
                        for (AclBinding b : authorizer.acls(filter)) found.add(format(b));
                        Collections.sort(found);
                        out.append("describe ").append(found.size()).append('\n');
                        for (String s : found) out.append(s).append('\n');
                    }
                    break;
                default:
                    throw new IllegalArgumentException("bad line: " + line);
            }
        }
        System.out.print(out);
        System.out.flush();
    }
}
