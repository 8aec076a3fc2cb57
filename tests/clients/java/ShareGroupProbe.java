// A KIP-932 share consumer that asks once to read a topic, driven by the Python tests.
//
//   java -cp kafka-clients.jar:slf4j-api.jar ShareGroupProbe.java BOOTSTRAP GROUP TOPIC POLLS
//
// It subscribes to TOPIC in share group GROUP and polls up to POLLS times, a second each.  It
// prints "records N" for each poll that returned records, then "failed <exception>" if a poll
// threw, or "polled" if none did, and exits 0.

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

public class ShareGroupProbe {
    public static void main(String[] args) {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[1]);
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        int polls = Integer.parseInt(args[3]);
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props)) {
            consumer.subscribe(List.of(args[2]));
            for (int i = 0; i < polls; i++) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofSeconds(1));
                if (!records.isEmpty()) {
                    System.out.println("records " + records.count());
                }
            }
            System.out.println("polled");
        } catch (RuntimeException e) {
            System.out.println(("failed " + e).replace('\n', ' '));
        }
    }
}
