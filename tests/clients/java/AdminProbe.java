// Kafka's Java Admin and producer against a broker: describe the cluster, create a topic, delete
// an unknown group, produce to every partition.  Prints one line per step; a failure prints
// "failed <step> <exception>" and exits non-zero.  Run from source:
//   java -cp kafka-clients.jar:slf4j-api.jar AdminProbe.java BOOTSTRAP TOPIC PARTITIONS
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

public class AdminProbe {
    public static void main(String[] args) throws Exception {
        String topic = args[1];
        int partitions = Integer.parseInt(args[2]);
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        String step = "admin";
        try (Admin admin = Admin.create(props)) {
            step = "describe";
            DescribeClusterResult cluster = admin.describeCluster();
            System.out.println("cluster " + cluster.clusterId().get() + " "
                    + cluster.nodes().get().size());
            step = "create";
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
            System.out.println("created " + topic);
            step = "delete-group";
            try {
                admin.deleteConsumerGroups(List.of("no-such-group")).all().get();
                System.out.println("deleted no-such-group");
            } catch (ExecutionException e) {
                System.out.println("delete-group " + e.getCause().getClass().getSimpleName());
            }
            props.put("key.serializer", StringSerializer.class.getName());
            props.put("value.serializer", StringSerializer.class.getName());
            step = "produce";
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
                for (int p = 0; p < partitions; p++) {
                    RecordMetadata meta = producer.send(
                            new ProducerRecord<>(topic, p, "k", "v" + p)).get();
                    System.out.println("produced " + meta.partition() + " " + meta.offset());
                }
            }
        } catch (Exception e) {
            System.out.println("failed " + step + " " + e);
            System.exit(1);
        }
    }
}
