// A consumer-group member on the Java kafka-clients, driven by the Python tests.
//
//   java -cp kafka-clients.jar:slf4j-api.jar GroupMember.java BOOTSTRAP GROUP TOPIC CLIENT_ID \
//        SESSION_MS HEARTBEAT_MS [KEY=VALUE ...]
//
// It subscribes to TOPIC in GROUP (extra consumer properties as KEY=VALUE) and reports on stdout,
// one line each: "assigned P,P,...", "revoked P,...", "record PARTITION OFFSET VALUE" for every
// record, "committed" after the synchronous commit that follows each non-empty poll, and
// "closed" at the end.  A line "close" on stdin makes it close the consumer (leaving the group)
// and exit 0; "commit P=OFFSET,..." commits those offsets.  Any failure is printed as
// "failed <exception>" and exits 1.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class GroupMember {
    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static String partitions(Collection<TopicPartition> tps) {
        return tps.stream().map(tp -> Integer.toString(tp.partition())).sorted()
                .collect(Collectors.joining(","));
    }

    public static void main(String[] args) throws Exception {
        String topic = args[2];
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[1]);
        props.put("client.id", args[3]);
        if (!"-".equals(args[4])) {  // "-": the consumer protocol, where the broker says
            props.put("session.timeout.ms", args[4]);
            props.put("heartbeat.interval.ms", args[5]);
        }
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "earliest");
        props.put("fetch.max.wait.ms", "100");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        for (int i = 6; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            props.put(kv[0], kv[1]);
        }
        ConcurrentLinkedQueue<String> commands = new ConcurrentLinkedQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    commands.add(line.trim());
                }
            } catch (Exception ignored) {
            }
            commands.add("close");  // stdin closed: the test is gone
        });
        reader.setDaemon(true);
        reader.start();

        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
                    say("revoked " + partitions(revoked));
                }

                public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
                    say("assigned " + partitions(assigned));
                }
            });
            while (true) {
                String command = commands.poll();
                if ("close".equals(command)) {
                    break;
                }
                if (command != null && command.startsWith("commit ")) {
                    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    for (String item : command.substring(7).split(",")) {
                        String[] po = item.split("=");
                        offsets.put(new TopicPartition(topic, Integer.parseInt(po[0])),
                                    new OffsetAndMetadata(Long.parseLong(po[1])));
                    }
                    consumer.commitSync(offsets);
                    say("committed");
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    say("record " + r.partition() + " " + r.offset() + " "
                        + new String(r.value(), StandardCharsets.UTF_8));
                }
                if (!records.isEmpty()) {
                    consumer.commitSync();
                    say("committed");
                }
            }
        } catch (Exception e) {
            say("failed " + e);
            System.exit(1);
        }
        say("closed");
    }
}
