// A Kafka producer or consumer of the stock Java client, with client telemetry as it comes
// (enable.metrics.push defaults to true): it produces or consumes a few records, prints its
// client instance id ("instance <id>", Kafka's base64 form), then keeps running, and pushing
// its metrics, until a line comes on standard input; it then closes, which sends its last,
// terminating push, and prints "closed".  Run from source:
//   java -cp kafka-clients.jar:slf4j-api.jar TelemetryClient.java BOOTSTRAP producer|consumer
//        TOPIC CLIENT_ID
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class TelemetryClient {
    static final int RECORDS = 5;

    public static void main(String[] args) throws Exception {
        String role = args[1];
        String topic = args[2];
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("client.id", args[3]);
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in));
        if (role.equals("producer")) {
            props.put("key.serializer", StringSerializer.class.getName());
            props.put("value.serializer", StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
                for (int i = 0; i < RECORDS; i++) {
                    producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i)).get();
                }
                System.out.println("produced " + RECORDS);
                System.out.println("instance "
                        + producer.clientInstanceId(Duration.ofSeconds(30)));
                System.out.flush();
                stdin.readLine();
            }
        } else {
            props.put("group.id", args[3]);
            props.put("auto.offset.reset", "earliest");
            props.put("key.deserializer", StringDeserializer.class.getName());
            props.put("value.deserializer", StringDeserializer.class.getName());
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
                consumer.subscribe(List.of(topic));
                int seen = 0;
                long deadline = System.currentTimeMillis() + 60_000;
                while (seen < RECORDS && System.currentTimeMillis() < deadline) {
                    ConsumerRecords<String, String> records =
                            consumer.poll(Duration.ofMillis(200));
                    seen += records.count();
                }
                System.out.println("consumed " + seen);
                System.out.println("instance "
                        + consumer.clientInstanceId(Duration.ofSeconds(30)));
                System.out.flush();
                // a consumer pushes from its poll loop's network client: keep polling until told
                while (!stdin.ready()) {
                    consumer.poll(Duration.ofMillis(100));
                }
                stdin.readLine();
            }
        }
        System.out.println("closed");
    }
}
