// Kafka's Java Admin describing and listing a group, as kafka-consumer-groups.sh does:
// describeConsumerGroups (ConsumerGroupDescribe for a KIP-848 group) and listGroups.  Prints
//   group ID TYPE STATE ASSIGNOR GROUP_EPOCH TARGET_EPOCH
//   member CLIENT_ID EPOCH UPGRADED ASSIGNED TARGET     (partitions as topic-p,..., sorted)
//   listed ID TYPE STATE
// Run from source: java -cp kafka-clients.jar:slf4j-api.jar ConsumerGroupAdmin.java BOOTSTRAP GROUP
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.MemberAssignment;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.common.TopicPartition;

public class ConsumerGroupAdmin {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        try (Admin admin = Admin.create(props)) {
            ConsumerGroupDescription g = admin.describeConsumerGroups(List.of(args[1]))
                .describedGroups().get(args[1]).get();
            System.out.println("group " + g.groupId() + " " + g.type() + " " + g.groupState()
                + " " + g.partitionAssignor() + " " + g.groupEpoch().orElse(-1) + " "
                + g.targetAssignmentEpoch().orElse(-1));
            TreeSet<String> members = new TreeSet<>();
            for (MemberDescription m : g.members()) {
                members.add("member " + m.clientId() + " " + m.memberEpoch().orElse(-1) + " "
                    + m.upgraded().orElse(null) + " " + partitions(m.assignment()) + " "
                    + m.targetAssignment().map(ConsumerGroupAdmin::partitions).orElse("-"));
            }
            members.forEach(System.out::println);
            TreeSet<String> listed = new TreeSet<>();
            for (GroupListing l : admin.listGroups().all().get()) {
                listed.add("listed " + l.groupId() + " " + l.type().orElse(null) + " "
                    + l.groupState().orElse(null));
            }
            listed.forEach(System.out::println);
        }
    }

    static String partitions(MemberAssignment assignment) {
        TreeSet<String> out = new TreeSet<>();
        for (TopicPartition tp : assignment.topicPartitions()) {
            out.add(tp.toString());
        }
        return String.join(",", out);
    }
}
