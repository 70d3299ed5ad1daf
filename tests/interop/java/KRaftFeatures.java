/*
 * Prints Apache Kafka's finalized-feature facts as JSON, one object per line, for
 * tests/interop/test_kraft_features_vs_kafka.py:
 *
 *   {"mv": level, "version": "4.3-IV0", ...}   one per MetadataVersion, with what it selects
 *   {"feature": name, "levels": [[level, bootstrap MV level, {dependency: level}], ...],
 *    "latestProduction": n, "latestTesting": n, "production": bool,
 *    "defaults": {MV level: default level}}   one per Feature
 */

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.FeatureVersion;
import org.apache.kafka.server.common.MetadataVersion;

public final class KRaftFeatures {

    private KRaftFeatures() {}

    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        for (MetadataVersion mv : MetadataVersion.values()) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("mv", mv.featureLevel());
            row.put("version", mv.version());
            row.put("release", mv.shortVersion());
            row.put("didMetadataChange", mv.didMetadataChange());
            row.put("production", mv.isProduction());
            row.put("scram", mv.isScramSupported());
            row.put("epochBumpOnIsrShrink", mv.isLeaderEpochBumpRequiredOnIsrShrink());
            row.put("metadataTransactions", mv.isMetadataTransactionSupported());
            row.put("delegationTokens", mv.isDelegationTokenSupported());
            row.put("controllerRegistration", mv.isControllerRegistrationSupported());
            row.put("directoryAssignment", mv.isDirectoryAssignmentSupported());
            row.put("elr", mv.isElrSupported());
            row.put("cordonedLogDirs", mv.isCordonedLogDirsSupported());
            row.put("registerBrokerRecordVersion", mv.registerBrokerRecordVersion());
            row.put("partitionRecordVersion", mv.partitionRecordVersion());
            row.put("partitionChangeRecordVersion", mv.partitionChangeRecordVersion());
            row.put("fetchRequestVersion", mv.fetchRequestVersion());
            row.put("listOffsetRequestVersion", mv.listOffsetRequestVersion());
            System.out.println(mapper.writeValueAsString(row));
        }
        for (Feature feature : Feature.PRODUCTION_FEATURES) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("feature", feature.featureName());
            List<Object> levels = new ArrayList<>();
            for (FeatureVersion v : feature.featureVersions()) {
                levels.add(List.of(v.featureLevel(), v.bootstrapMetadataVersion().featureLevel(), v.dependencies()));
            }
            row.put("levels", levels);
            row.put("latestProduction", feature.latestProduction());
            row.put("latestTesting", feature.latestTesting());
            Map<String, Short> defaults = new LinkedHashMap<>();
            for (MetadataVersion mv : MetadataVersion.values()) {
                defaults.put(String.valueOf(mv.featureLevel()), feature.defaultLevel(mv));
            }
            row.put("defaults", defaults);
            System.out.println(mapper.writeValueAsString(row));
        }
    }
}
