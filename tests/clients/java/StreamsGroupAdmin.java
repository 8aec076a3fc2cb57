// Kafka's Java Admin looking at streams groups (KIP-1071), as kafka-streams-groups.sh does, for
// the Python tests: one JVM that answers commands read from stdin, one per line, so a test can
// poll a group without starting a JVM each time.
//
//   java -cp kafka-clients.jar:slf4j-api.jar StreamsGroupAdmin.java BOOTSTRAP
//
// Commands, and what is printed for each (then a line "end"):
//   describe GROUP          describeStreamsGroups:
//                             group ID STATE GROUP_EPOCH TARGET_EPOCH TOPOLOGY_EPOCH ASSIGNOR
//                             subtopology ID SOURCES SINKS REPARTITION CHANGELOGS
//                             member ID PROCESS EPOCH CLIENT_ID ACTIVE STANDBY WARMUP
//                                    TARGET_ACTIVE TARGET_STANDBY
//                           topics as NAME[,NAME...] and internal topics as NAME:PARTITIONS[,...],
//                           tasks as SUBTOPOLOGY:P,P[;SUBTOPOLOGY:P...], sorted; "-" for none
//   set-config GROUP NAME VALUE
//                           incrementalAlterConfigs SET on the GROUP resource: "ok"
//   config GROUP            describeConfigs of the GROUP resource: "config NAME VALUE SOURCE"
//                           for each config
// A command that fails prints "error EXCEPTION_CLASS MESSAGE" instead.  A line "quit", or stdin
// closing, ends the program.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberAssignment;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.admin.StreamsGroupSubtopologyDescription;
import org.apache.kafka.common.config.ConfigResource;

public class StreamsGroupAdmin {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("default.api.timeout.ms", "20000");
        props.put("request.timeout.ms", "10000");
        try (Admin admin = Admin.create(props);
             BufferedReader in = new BufferedReader(
                 new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null && !"quit".equals(line.trim())) {
                String[] words = line.trim().split(" ");
                List<String> out = new ArrayList<>();
                try {
                    switch (words[0]) {
                        case "describe" -> describe(admin, words[1], out);
                        case "set-config" -> {
                            ConfigResource group = new ConfigResource(
                                ConfigResource.Type.GROUP, words[1]);
                            AlterConfigOp set = new AlterConfigOp(
                                new ConfigEntry(words[2], words[3]), AlterConfigOp.OpType.SET);
                            admin.incrementalAlterConfigs(Map.of(group, List.of(set)))
                                .all().get(30, TimeUnit.SECONDS);
                            out.add("ok");
                        }
                        case "config" -> {
                            ConfigResource group = new ConfigResource(
                                ConfigResource.Type.GROUP, words[1]);
                            Config config = admin.describeConfigs(List.of(group)).all()
                                .get(30, TimeUnit.SECONDS).get(group);
                            for (ConfigEntry entry : config.entries()) {
                                out.add("config " + entry.name() + " " + entry.value() + " "
                                    + entry.source());
                            }
                        }
                        default -> out.add("error IllegalArgumentException unknown command "
                            + words[0]);
                    }
                } catch (ExecutionException e) {
                    out.clear();
                    Throwable cause = e.getCause() == null ? e : e.getCause();
                    out.add("error " + cause.getClass().getSimpleName() + " "
                        + cause.getMessage());
                } catch (Exception e) {
                    out.clear();
                    out.add("error " + e.getClass().getSimpleName() + " " + e.getMessage());
                }
                out.add("end");
                for (String answer : out) {
                    System.out.println(answer.replace('\n', ' '));
                }
                System.out.flush();
            }
        }
    }

    static void describe(Admin admin, String groupId, List<String> out) throws Exception {
        StreamsGroupDescription g = admin.describeStreamsGroups(List.of(groupId))
            .describedGroups().get(groupId).get(30, TimeUnit.SECONDS);
        out.add("group " + g.groupId() + " " + g.groupState() + " " + g.groupEpoch() + " "
            + g.targetAssignmentEpoch() + " " + g.topologyEpoch() + " "
            + g.assignorName().orElse("-"));
        TreeMap<String, String> subtopologies = new TreeMap<>();
        for (StreamsGroupSubtopologyDescription s : g.subtopologies()) {
            subtopologies.put(s.subtopologyId(), "subtopology " + s.subtopologyId() + " "
                + names(s.sourceTopics()) + " " + names(s.repartitionSinkTopics()) + " "
                + internal(s.repartitionSourceTopics()) + " "
                + internal(s.stateChangelogTopics()));
        }
        out.addAll(subtopologies.values());
        TreeSet<String> members = new TreeSet<>();
        for (StreamsGroupMemberDescription m : g.members()) {
            StreamsGroupMemberAssignment now = m.assignment();
            StreamsGroupMemberAssignment target = m.targetAssignment();
            members.add("member " + m.memberId() + " " + m.processId() + " " + m.memberEpoch()
                + " " + m.clientId() + " " + tasks(now.activeTasks()) + " "
                + tasks(now.standbyTasks()) + " " + tasks(now.warmupTasks()) + " "
                + tasks(target.activeTasks()) + " " + tasks(target.standbyTasks()));
        }
        out.addAll(members);
    }

    static String names(Collection<String> topics) {
        return topics.isEmpty() ? "-" : String.join(",", new TreeSet<>(topics));
    }

    static String internal(Map<String, StreamsGroupSubtopologyDescription.TopicInfo> topics) {
        if (topics.isEmpty()) {
            return "-";
        }
        List<String> out = new ArrayList<>();
        new TreeMap<>(topics).forEach((name, info) -> out.add(name + ":" + info.partitions()));
        return String.join(",", out);
    }

    static String tasks(List<StreamsGroupMemberAssignment.TaskIds> tasks) {
        TreeMap<String, TreeSet<Integer>> bySubtopology = new TreeMap<>();
        for (StreamsGroupMemberAssignment.TaskIds t : tasks) {
            bySubtopology.computeIfAbsent(t.subtopologyId(), k -> new TreeSet<>())
                .addAll(t.partitions());
        }
        List<String> out = new ArrayList<>();
        bySubtopology.forEach((id, partitions) -> {
            List<String> ps = new ArrayList<>();
            partitions.forEach(p -> ps.add(String.valueOf(p)));
            if (!ps.isEmpty()) {
                out.add(id + ":" + String.join(",", ps));
            }
        });
        return out.isEmpty() ? "-" : String.join(";", out);
    }
}
