import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignorException;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.assignor.AssignmentConfigsImpl;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.apache.kafka.coordinator.group.streams.assignor.MemberMetadataAndStateImpl;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;

/**
 * Runs Kafka's own streams-group sticky assignor over the groups read from stdin and prints
 * what it assigns, for tests/core/groups_streams/test_assignor.py to compare with mockbroker's.
 *
 * <p>Input, one group after another: {@code case STANDBYS}, then {@code sub ID TASKS STATEFUL}
 * lines, {@code member ID PROCESS} lines, each followed by its {@code active SUB P...},
 * {@code standby SUB P...} and {@code offset SUB P OFFSET} lines, and {@code end}. The members
 * go into the assignor's map in the order given, as the coordinator puts them.
 *
 * <p>Output per group: {@code error MESSAGE}, or one line per member in the order given:
 * {@code ID ACTIVE STANDBY}, each {@code SUB:P,P;SUB:P} sorted, or {@code -} when empty.
 */
public class StickyTaskAssignorCases {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        int standbys = 0;
        Map<String, int[]> subs = new TreeMap<>();
        Map<String, String[]> members = new LinkedHashMap<>();
        Map<String, Map<String, Set<Integer>>> active = new HashMap<>();
        Map<String, Map<String, Set<Integer>>> standby = new HashMap<>();
        Map<String, Map<String, Map<Integer, Long>>> offsets = new HashMap<>();
        String last = null;
        for (String line; (line = in.readLine()) != null; ) {
            String[] w = line.trim().split(" ");
            switch (w[0]) {
                case "case":
                    standbys = Integer.parseInt(w[1]);
                    subs.clear(); members.clear(); active.clear(); standby.clear();
                    offsets.clear();
                    break;
                case "sub":
                    subs.put(w[1], new int[] {Integer.parseInt(w[2]), Integer.parseInt(w[3])});
                    break;
                case "member":
                    last = w[1];
                    members.put(last, w);
                    active.put(last, new HashMap<>());
                    standby.put(last, new HashMap<>());
                    offsets.put(last, new HashMap<>());
                    break;
                case "active":
                case "standby":
                    Set<Integer> ps = (w[0].equals("active") ? active : standby).get(last)
                        .computeIfAbsent(w[1], k -> new TreeSet<>());
                    for (int i = 2; i < w.length; i++) {
                        ps.add(Integer.parseInt(w[i]));
                    }
                    break;
                case "offset":
                    offsets.get(last).computeIfAbsent(w[1], k -> new HashMap<>())
                        .put(Integer.parseInt(w[2]), Long.parseLong(w[3]));
                    break;
                case "end":
                    run(standbys, subs, members, active, standby, offsets);
                    break;
                default:
                    throw new IllegalArgumentException(line);
            }
        }
    }

    private static void run(int standbys, Map<String, int[]> subs, Map<String, String[]> members,
                            Map<String, Map<String, Set<Integer>>> active,
                            Map<String, Map<String, Set<Integer>>> standby,
                            Map<String, Map<String, Map<Integer, Long>>> offsets) {
        Map<String, MemberMetadataAndStateImpl> specs = new HashMap<>();
        for (String[] m : members.values()) {
            specs.put(m[1], new MemberMetadataAndStateImpl(Optional.empty(), Optional.empty(),
                m[2], Map.of(), active.get(m[1]), standby.get(m[1]), Map.of(),
                offsets.get(m[1]), Map.of()));
        }
        TopologyDescriber topology = new TopologyDescriber() {
            public List<String> subtopologies() {
                return new ArrayList<>(subs.keySet());
            }

            public int maxNumInputPartitions(String id) {
                return subs.get(id)[0];
            }

            public boolean isStateful(String id) {
                return subs.get(id)[1] != 0;
            }
        };
        GroupSpecImpl group =
            new GroupSpecImpl(specs, new AssignmentConfigsImpl(standbys, List.of()));
        GroupAssignment result;
        try {
            result = new StickyTaskAssignor().assign(group, topology);
        } catch (TaskAssignorException e) {
            System.out.println("error " + e.getMessage());
            System.out.println("end");
            return;
        }
        for (String id : members.keySet()) {
            MemberAssignment a = result.members().get(id);
            System.out.println(id + " " + show(a.activeTasks()) + " " + show(a.standbyTasks()));
        }
        System.out.println("end");
    }

    private static String show(Map<String, Set<Integer>> tasks) {
        List<String> parts = new ArrayList<>();
        for (Map.Entry<String, Set<Integer>> e : new TreeMap<>(tasks).entrySet()) {
            if (!e.getValue().isEmpty()) {
                List<String> ps = new ArrayList<>();
                for (int p : new TreeSet<>(e.getValue())) {
                    ps.add(Integer.toString(p));
                }
                parts.add(e.getKey() + ":" + String.join(",", ps));
            }
        }
        return parts.isEmpty() ? "-" : String.join(";", parts);
    }
}
