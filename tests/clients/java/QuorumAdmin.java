// Kafka's Java Admin on the controller quorum and on log directories.
//   quorum BOOTSTRAP                    describeMetadataQuorum:
//       quorum LEADER EPOCH HIGH_WATERMARK
//       voter ID DIRECTORY_ID LOG_END_OFFSET FETCHED CAUGHT_UP   (FETCHED, CAUGHT_UP: whether
//       observer ...                                              the timestamp is known)
//       node ID LISTENER://HOST:PORT
//   logdirs BOOTSTRAP BROKER TOPIC PARTITION DIR
//       dirs DIR,...                    describeLogDirs of the broker
//       moved OK | moved EXCEPTION_CLASS    alterReplicaLogDirs of the replica to DIR
//       replica CURRENT_DIR FUTURE_DIR  describeReplicaLogDirs of it afterwards
// Run from source: java -cp kafka-clients.jar:slf4j-api.jar QuorumAdmin.java MODE ARGS...
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeReplicaLogDirsResult.ReplicaLogDirInfo;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.RaftVoterEndpoint;
import org.apache.kafka.common.TopicPartitionReplica;

public class QuorumAdmin {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[1]);
        props.put("default.api.timeout.ms", "30000");
        try (Admin admin = Admin.create(props)) {
            if (args[0].equals("quorum")) {
                quorum(admin);
            } else {
                logDirs(admin, Integer.parseInt(args[2]), args[3], Integer.parseInt(args[4]),
                    args[5]);
            }
        }
    }

    static void quorum(Admin admin) throws Exception {
        QuorumInfo info = admin.describeMetadataQuorum().quorumInfo().get();
        System.out.println("quorum " + info.leaderId() + " " + info.leaderEpoch() + " "
            + info.highWatermark());
        for (QuorumInfo.ReplicaState v : info.voters()) {
            System.out.println("voter " + replica(v));
        }
        for (QuorumInfo.ReplicaState o : info.observers()) {
            System.out.println("observer " + replica(o));
        }
        for (QuorumInfo.Node node : info.nodes().values()) {
            for (RaftVoterEndpoint e : node.endpoints()) {
                System.out.println("node " + node.nodeId() + " " + e.listener() + "://"
                    + e.host() + ":" + e.port());
            }
        }
    }

    static String replica(QuorumInfo.ReplicaState r) {
        return r.replicaId() + " " + r.replicaDirectoryId() + " " + r.logEndOffset() + " "
            + r.lastFetchTimestamp().isPresent() + " " + r.lastCaughtUpTimestamp().isPresent();
    }

    static void logDirs(Admin admin, int broker, String topic, int partition, String dir)
            throws Exception {
        TreeSet<String> dirs = new TreeSet<>(admin.describeLogDirs(List.of(broker))
            .allDescriptions().get().get(broker).keySet());
        System.out.println("dirs " + String.join(",", dirs));
        TopicPartitionReplica replica = new TopicPartitionReplica(topic, partition, broker);
        try {
            admin.alterReplicaLogDirs(Map.of(replica, dir)).all().get();
            System.out.println("moved OK");
        } catch (ExecutionException e) {
            System.out.println("moved " + e.getCause().getClass().getSimpleName());
        }
        ReplicaLogDirInfo info = admin.describeReplicaLogDirs(List.of(replica)).all().get()
            .get(replica);
        System.out.println("replica " + info.getCurrentReplicaLogDir() + " "
            + info.getFutureReplicaLogDir());
    }
}
