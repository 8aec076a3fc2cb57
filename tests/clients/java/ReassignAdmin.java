// Kafka's Java Admin on leader elections and partition reassignments: electLeaders,
// alterPartitionReassignments and listPartitionReassignments, several calls in one JVM.
// Each argument after BOOTSTRAP is one call, its words separated by spaces; a partition is
// written TOPIC-PARTITION (the last '-' splits it):
//   elect PREFERRED|UNCLEAN all|none|TP,TP...   electLeaders of every partition (null), of an
//                                               empty set, or of those named
//   alter allow|disallow TP=1,2 TP=cancel ...   alterPartitionReassignments with
//                                               allowReplicationFactorChange; cancel = empty
//   list all|TP,TP...                           listPartitionReassignments
// One line per partition of the answer, sorted:
//   elect TP OK | elect TP EXCEPTION_CLASS: MESSAGE   (elect {} when the answer is empty)
//   alter TP OK | alter TP EXCEPTION_CLASS: MESSAGE
//   list TP replicas=1,2,3 adding=1 removing=3        (list {} when nothing is listed)
// A call that fails as a whole prints `CALL failed EXCEPTION_CLASS: MESSAGE`.
// Run from source: java -cp kafka-clients.jar:slf4j-api.jar ReassignAdmin.java BOOTSTRAP CALL...
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterPartitionReassignmentsOptions;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;

public class ReassignAdmin {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("default.api.timeout.ms", "30000");
        try (Admin admin = Admin.create(props)) {
            for (int i = 1; i < args.length; i++) {
                String[] words = args[i].split(" ");
                try {
                    switch (words[0]) {
                        case "elect" -> elect(admin, words[1], words[2]);
                        case "alter" -> alter(admin, words);
                        case "list" -> list(admin, words[1]);
                        default -> throw new IllegalArgumentException("unknown call " + args[i]);
                    }
                } catch (ExecutionException e) {
                    System.out.println(words[0] + " failed " + describe(e.getCause()));
                }
            }
        }
    }

    static TopicPartition partition(String written) {
        int dash = written.lastIndexOf('-');
        return new TopicPartition(written.substring(0, dash),
            Integer.parseInt(written.substring(dash + 1)));
    }

    static Set<TopicPartition> partitions(String written) {
        Set<TopicPartition> out = new HashSet<>();
        for (String tp : written.split(",")) {
            out.add(partition(tp));
        }
        return out;
    }

    static String describe(Throwable error) {
        return error.getClass().getSimpleName() + ": " + error.getMessage();
    }

    static void elect(Admin admin, String type, String which) throws Exception {
        Set<TopicPartition> asked = switch (which) {
            case "all" -> null;
            case "none" -> Set.of();
            default -> partitions(which);
        };
        Map<TopicPartition, Optional<Throwable>> results =
            admin.electLeaders(ElectionType.valueOf(type), asked).partitions().get();
        if (results.isEmpty()) {
            System.out.println("elect {}");
        }
        new TreeMap<String, Optional<Throwable>>(results.entrySet().stream().collect(
            Collectors.toMap(e -> e.getKey().toString(), Map.Entry::getValue)))
            .forEach((tp, error) -> System.out.println(
                "elect " + tp + " " + error.map(ReassignAdmin::describe).orElse("OK")));
    }

    static void alter(Admin admin, String[] words) throws Exception {
        Map<TopicPartition, Optional<NewPartitionReassignment>> wanted = new HashMap<>();
        for (int i = 2; i < words.length; i++) {
            String[] pair = words[i].split("=");
            Optional<NewPartitionReassignment> target = Optional.empty();
            if (!pair[1].equals("cancel")) {
                List<Integer> replicas = new ArrayList<>();
                for (String id : pair[1].split(",")) {
                    replicas.add(Integer.parseInt(id));
                }
                target = Optional.of(new NewPartitionReassignment(replicas));
            }
            wanted.put(partition(pair[0]), target);
        }
        AlterPartitionReassignmentsOptions options = new AlterPartitionReassignmentsOptions();
        options.allowReplicationFactorChange(words[1].equals("allow"));
        Map<TopicPartition, KafkaFuture<Void>> results =
            admin.alterPartitionReassignments(wanted, options).values();
        Map<String, String> lines = new TreeMap<>();
        for (Map.Entry<TopicPartition, KafkaFuture<Void>> e : results.entrySet()) {
            String outcome = "OK";
            try {
                e.getValue().get();
            } catch (ExecutionException failed) {
                outcome = describe(failed.getCause());
            }
            lines.put(e.getKey().toString(), outcome);
        }
        lines.forEach((tp, outcome) -> System.out.println("alter " + tp + " " + outcome));
    }

    static void list(Admin admin, String which) throws Exception {
        Map<TopicPartition, PartitionReassignment> listed = which.equals("all")
            ? admin.listPartitionReassignments().reassignments().get()
            : admin.listPartitionReassignments(partitions(which)).reassignments().get();
        if (listed.isEmpty()) {
            System.out.println("list {}");
        }
        Map<String, String> lines = new TreeMap<>();
        listed.forEach((tp, r) -> lines.put(tp.toString(), "replicas=" + ids(r.replicas())
            + " adding=" + ids(r.addingReplicas()) + " removing=" + ids(r.removingReplicas())));
        lines.forEach((tp, line) -> System.out.println("list " + tp + " " + line));
    }

    static String ids(List<Integer> ids) {
        return ids.stream().map(String::valueOf).collect(Collectors.joining(","));
    }
}
