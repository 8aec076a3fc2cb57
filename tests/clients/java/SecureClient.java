// The Java kafka-clients on a secured listener (SASL_PLAINTEXT, SASL_SSL, SSL), driven by
// tests/clients/test_security_java.py.  Every client of a run takes its security settings
// from a properties file (security.protocol, sasl.*, ssl.*), as an application would.
//
//   java -cp kafka-clients.jar:slf4j-api.jar SecureClient.java MODE ...
//
//   roundtrip CONFIG BOOTSTRAP TOPIC GROUP COUNT
//       Admin creates TOPIC (2 partitions) and describes the cluster; an idempotent producer
//       writes COUNT records ("key-I", "value-I", headers "n"=I and "via"=security.protocol);
//       a consumer in GROUP reads them from the start and commits with commitSync; Admin lists
//       the group's committed offsets.
//   refused CONFIG BOOTSTRAP TOPIC
//       a producer asks for TOPIC's partitions, then sends a record and waits for it; both are
//       expected to fail (bad credentials, no client certificate).  When the first times out,
//       the second is not tried ("send not tried").
//
// Lines on stdout: "cluster ID NODES CONTROLLER" (NODES as ID@HOST:PORT,...), "sent PARTITION
// OFFSET", "record PARTITION OFFSET KEY VALUE H=V;H=V", "committed P=O,...", and for refused
// "partitionsFor MILLIS CLASS: MESSAGE | caused by CLASS: MESSAGE ..." and "send ..." alike
// (how long the failure took to come, and the exception with its causes), and "done" at the
// end.  A failure the mode does not expect is printed as "failed <exception>" and exits 1.

import java.io.FileReader;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class SecureClient {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static String text(byte[] bytes) {
        return bytes == null ? "-" : new String(bytes, StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Properties config(String file, String bootstrap) throws IOException {
        Properties props = new Properties();
        try (Reader in = new FileReader(file, StandardCharsets.UTF_8)) {
            props.load(in);
        }
        props.put("bootstrap.servers", bootstrap);
        return props;
    }

    private static KafkaProducer<byte[], byte[]> producer(Properties base) {
        Properties props = new Properties();
        props.put("acks", "all");
        props.put("linger.ms", "0");
        props.put("max.block.ms", Long.toString(TIMEOUT.toMillis()));
        props.put("delivery.timeout.ms", Long.toString(TIMEOUT.toMillis()));
        props.put("request.timeout.ms", "10000");
        props.putAll(base);  // the run's own settings win
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static void roundtrip(Properties base, String topic, String group, int count)
            throws Exception {
        Properties adminProps = new Properties();
        adminProps.putAll(base);
        adminProps.put("default.api.timeout.ms", Long.toString(TIMEOUT.toMillis()));
        try (Admin admin = Admin.create(adminProps)) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
            DescribeClusterResult cluster = admin.describeCluster();
            String nodes = cluster.nodes().get().stream()
                .sorted((a, b) -> Integer.compare(a.id(), b.id()))
                .map(n -> n.id() + "@" + n.host() + ":" + n.port())
                .collect(Collectors.joining(","));
            Node controller = cluster.controller().get();
            say("cluster " + cluster.clusterId().get() + " " + nodes + " "
                + (controller == null ? "-" : Integer.toString(controller.id())));

            String protocol = base.getProperty("security.protocol", "PLAINTEXT");
            try (KafkaProducer<byte[], byte[]> producer = producer(base)) {
                for (int i = 0; i < count; i++) {
                    ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(
                        topic, bytes("key-" + i), bytes("value-" + i));
                    record.headers().add("n", bytes(Integer.toString(i)));
                    record.headers().add("via", bytes(protocol));
                    RecordMetadata sent = producer.send(record).get();
                    say("sent " + sent.partition() + " " + sent.offset());
                }
            }

            Properties consumerProps = new Properties();
            consumerProps.putAll(base);
            consumerProps.put("group.id", group);
            consumerProps.put("auto.offset.reset", "earliest");
            consumerProps.put("enable.auto.commit", "false");
            consumerProps.put("session.timeout.ms", "6000");
            consumerProps.put("heartbeat.interval.ms", "500");
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(
                    consumerProps, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(topic));
                int got = 0;
                long deadline = System.currentTimeMillis() + TIMEOUT.toMillis();
                while (got < count) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("read " + got + " of " + count);
                    }
                    var records = consumer.poll(Duration.ofMillis(200));
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        List<String> headers = new ArrayList<>();
                        for (Header h : r.headers()) {
                            headers.add(h.key() + "=" + text(h.value()));
                        }
                        say("record " + r.partition() + " " + r.offset() + " " + text(r.key())
                            + " " + text(r.value()) + " " + String.join(";", headers));
                        got++;
                    }
                }
                consumer.commitSync(TIMEOUT);
            }

            Map<TopicPartition, OffsetAndMetadata> committed = admin
                .listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            Map<Integer, Long> byPartition = new TreeMap<>();
            committed.forEach((tp, om) -> byPartition.put(tp.partition(), om.offset()));
            say("committed " + byPartition.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(",")));
        }
    }

    /** "MILLIS CLASS: MESSAGE | caused by CLASS: MESSAGE ..." of a call's failure. */
    private static String failure(Throwable t, long startedNs) {
        while (t instanceof ExecutionException && t.getCause() != null) {
            t = t.getCause();
        }
        List<String> chain = new ArrayList<>();
        for (Throwable c = t; c != null && chain.size() < 4; c = c.getCause()) {
            chain.add(c.getClass().getName() + ": "
                      + String.valueOf(c.getMessage()).replace('\n', ' '));
        }
        return (System.nanoTime() - startedNs) / 1_000_000 + " "
            + String.join(" | caused by ", chain);
    }

    private static void refused(Properties base, String topic) {
        try (KafkaProducer<byte[], byte[]> producer = producer(base)) {
            long started = System.nanoTime();
            try {
                producer.partitionsFor(topic);
                say("partitionsFor succeeded");
            } catch (TimeoutException e) {
                // never told why it cannot connect: a send would only wait as long again
                say("partitionsFor " + failure(e, started));
                say("send not tried");
                return;
            } catch (Exception e) {
                say("partitionsFor " + failure(e, started));
            }
            started = System.nanoTime();
            try {
                producer.send(new ProducerRecord<>(topic, bytes("k"), bytes("v"))).get();
                say("send succeeded");
            } catch (Exception e) {
                say("send " + failure(e, started));
            }
        }
    }

    public static void main(String[] args) {
        try {
            String mode = args[0];
            Properties base = config(args[1], args[2]);
            switch (mode) {
                case "roundtrip":
                    roundtrip(base, args[3], args[4], Integer.parseInt(args[5]));
                    break;
                case "refused":
                    refused(base, args[3]);
                    break;
                default:
                    throw new IllegalArgumentException("unknown mode " + mode);
            }
            say("done");
            System.exit(0);
        } catch (Throwable t) {
            say("failed " + t);
            t.printStackTrace();
            System.exit(1);
        }
    }
}
