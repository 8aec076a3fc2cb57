// A KIP-932 share consumer (KafkaShareConsumer) on the Java kafka-clients, driven by the Python
// tests over stdin and stdout.
//
//   java -cp kafka-clients.jar:slf4j-api.jar ShareWorker.java BOOTSTRAP GROUP TOPIC CLIENT_ID \
//        [KEY=VALUE ...]
//
// It subscribes to TOPIC in share group GROUP (extra consumer properties as KEY=VALUE, such as
// share.acknowledgement.mode=explicit) and polls in a loop.  It prints, one line each:
//
//   record PARTITION OFFSET DELIVERY_COUNT VALUE   for every record a poll returns
//   acked PARTITION OFFSET,OFFSET,...              acknowledgements the broker took
//   ack-failed PARTITION OFFSET,... EXCEPTION      acknowledgements the broker refused
//   committed                                      after a "commit" command
//   closed                                         after a "close" command
//   failed EXCEPTION                               on any other error (then it exits 1)
//
// Commands on stdin, one a line:
//
//   ack PARTITION:OFFSET:TYPE ...   acknowledge records of the last poll (explicit mode; TYPE is
//                                   accept, release or reject); the next poll sends them
//   commit                          send the acknowledgements given so far now (commitSync)
//   hold                            stop polling, without acknowledging or leaving the group
//   close                           close the consumer (sending what is acknowledged) and exit 0
//   kill                            exit at once, closing nothing
//
// In explicit mode it does not poll again until every record of the last poll is acknowledged,
// as the consumer demands; in implicit mode each poll accepts what the previous one returned.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class ShareWorker {
    private static synchronized void say(String line) {
        System.out.println(line.replace('\n', ' '));
        System.out.flush();
    }

    public static void main(String[] args) {
        String topic = args[2];
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[1]);
        props.put("client.id", args[3]);
        props.put("fetch.max.wait.ms", "100");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        for (int i = 4; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            props.put(kv[0], kv[1]);
        }
        boolean explicit = "explicit".equals(props.getProperty("share.acknowledgement.mode"));

        BlockingQueue<String> commands = new LinkedBlockingQueue<>();
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

        try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(props)) {
            consumer.setAcknowledgementCommitCallback((offsets, exception) ->
                offsets.forEach((tip, done) -> {
                    String list = done.stream().sorted().map(String::valueOf)
                            .collect(Collectors.joining(","));
                    say(exception == null ? "acked " + tip.partition() + " " + list
                        : "ack-failed " + tip.partition() + " " + list + " " + exception);
                }));
            consumer.subscribe(List.of(topic));
            // explicit mode: the records of the last poll not acknowledged yet, by
            // "partition:offset"
            Map<String, ConsumerRecord<byte[], byte[]>> unacknowledged = new HashMap<>();
            boolean held = false;
            while (true) {
                boolean idle = held || !unacknowledged.isEmpty();
                String command = idle ? commands.poll(20, TimeUnit.MILLISECONDS)
                                      : commands.poll();
                if (command != null) {
                    if (command.equals("close")) {
                        break;
                    } else if (command.equals("kill")) {
                        Runtime.getRuntime().halt(0);
                    } else if (command.equals("hold")) {
                        held = true;
                    } else if (command.equals("commit")) {
                        consumer.commitSync();
                        say("committed");
                    } else if (command.startsWith("ack ")) {
                        for (String item : command.substring(4).trim().split("\\s+")) {
                            int colon = item.lastIndexOf(':');
                            ConsumerRecord<byte[], byte[]> record =
                                unacknowledged.remove(item.substring(0, colon));
                            if (record == null) {
                                throw new IllegalArgumentException("no record " + item);
                            }
                            consumer.acknowledge(record, AcknowledgeType.valueOf(
                                item.substring(colon + 1).toUpperCase(Locale.ROOT)));
                        }
                    } else {
                        throw new IllegalArgumentException("unknown command " + command);
                    }
                    continue;
                }
                if (idle) {
                    continue;
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    say("record " + r.partition() + " " + r.offset() + " "
                        + r.deliveryCount().map(String::valueOf).orElse("-") + " "
                        + new String(r.value(), StandardCharsets.UTF_8));
                    if (explicit) {
                        unacknowledged.put(r.partition() + ":" + r.offset(), r);
                    }
                }
            }
        } catch (Exception e) {
            say("failed " + e);
            System.exit(1);
        }
        say("closed");
    }
}
