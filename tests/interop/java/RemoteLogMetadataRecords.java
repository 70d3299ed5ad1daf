/*
 * Reads and writes __remote_log_metadata records with Apache Kafka's own
 * RemoteLogMetadataSerde, for tests/interop/test_remote_log_metadata_vs_kafka.py.
 *
 *   java -cp "<build dir>:<kafka libs>/*" RemoteLogMetadataRecords -
 *
 * One request per line of stdin, one answer per line (LineServer):
 *
 *   decode <hex>
 *       RemoteLogMetadataSerde.deserialize of the frame into Kafka's model object
 *       (RemoteLogSegmentMetadata, ...Update or RemotePartitionDeleteMetadata), then
 *       serialize of that object:
 *       ok <frame Kafka writes back, hex> <the object's toString()>
 *   partition <topic id> <partition> <metadata topic partitions>
 *       RemoteLogMetadataTopicPartitioner.metadataPartition:
 *       ok <partition>
 *
 * Either answers "err <exception class>: <message>" when Kafka throws.
 */

import java.util.HexFormat;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogMetadataTopicPartitioner;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;

public final class RemoteLogMetadataRecords {

    private static final HexFormat HEX = HexFormat.of();

    private RemoteLogMetadataRecords() {}

    private static String one(RemoteLogMetadataSerde serde, String line) {
        String[] words = line.split(" ");
        if (words[0].equals("decode")) {
            RemoteLogMetadata metadata = serde.deserialize(HEX.parseHex(words[1]));
            return "ok " + HEX.formatHex(serde.serialize(metadata)) + " " + metadata;
        }
        if (words[0].equals("partition")) {
            RemoteLogMetadataTopicPartitioner partitioner =
                new RemoteLogMetadataTopicPartitioner(Integer.parseInt(words[3]));
            TopicIdPartition tip = new TopicIdPartition(
                Uuid.fromString(words[1]), Integer.parseInt(words[2]), "t");
            return "ok " + partitioner.metadataPartition(tip);
        }
        throw new IllegalArgumentException("unknown request " + words[0]);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !args[0].equals("-")) {
            System.err.println("usage: RemoteLogMetadataRecords -");
            System.exit(2);
        }
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        LineServer.serve(line -> one(serde, line));
    }
}
