import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.controller.QuorumFeatures;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.FeatureVersion;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * Kafka's feature tables, for kafkacore.features' differential test
 * (tests/interop/test_features_vs_kafka.py): prints one JSON object with every
 * metadata.version (level, name, didMetadataChange, shortVersion), every production feature
 * (levels with bootstrap metadata.version and dependencies, latest production and testing
 * levels), the supported ranges of a node (QuorumFeatures.defaultSupportedFeatureMap, with and
 * without unstable versions) and each feature's default level at every metadata.version.
 */
public final class Features {
    private Features() {}

    public static void main(String[] args) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        List<Object> versions = new ArrayList<>();
        for (MetadataVersion mv : MetadataVersion.VERSIONS) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("level", mv.featureLevel());
            row.put("version", mv.version());
            row.put("changed", mv.didMetadataChange());
            row.put("release", mv.shortVersion());
            row.put("controller_registration", mv.isControllerRegistrationSupported());
            versions.add(row);
        }
        out.put("metadata_versions", versions);
        out.put("minimum", MetadataVersion.MINIMUM_VERSION.featureLevel());
        out.put("latest_production", MetadataVersion.latestProduction().featureLevel());
        out.put("latest_testing", MetadataVersion.latestTesting().featureLevel());
        List<Object> features = new ArrayList<>();
        for (Feature feature : Feature.PRODUCTION_FEATURES) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("name", feature.featureName());
            row.put("latest_production", feature.latestProduction());
            row.put("latest_testing", feature.latestTesting());
            row.put("minimum_production", feature.minimumProduction());
            List<Object> levels = new ArrayList<>();
            for (FeatureVersion version : feature.featureVersions()) {
                Map<String, Object> level = new LinkedHashMap<>();
                level.put("level", version.featureLevel());
                level.put("bootstrap", version.bootstrapMetadataVersion().featureLevel());
                level.put("dependencies", version.dependencies());
                levels.add(level);
            }
            row.put("levels", levels);
            Map<String, Object> defaults = new LinkedHashMap<>();
            for (MetadataVersion mv : MetadataVersion.VERSIONS) {
                defaults.put(String.valueOf(mv.featureLevel()), feature.defaultLevel(mv));
            }
            row.put("defaults", defaults);
            features.add(row);
        }
        out.put("features", features);
        out.put("supported", ranges(QuorumFeatures.defaultSupportedFeatureMap(false)));
        out.put("supported_unstable", ranges(QuorumFeatures.defaultSupportedFeatureMap(true)));
        System.out.println(new ObjectMapper().writeValueAsString(out));
    }

    private static Map<String, List<Short>> ranges(Map<String, VersionRange> map) {
        Map<String, List<Short>> out = new LinkedHashMap<>();
        map.forEach((name, range) -> out.put(name, List.of(range.min(), range.max())));
        return out;
    }
}
