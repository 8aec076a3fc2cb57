// Transactions on the Java kafka-clients, driven by the Python tests.
//
//   java -cp kafka-clients.jar:slf4j-api.jar TxnClient.java MODE BOOTSTRAP ...
//
//   basic BOOTSTRAP TOPIC TXN_ID
//       three transactions of PARTITIONS*3 records each ("first" committed, "aborted" aborted,
//       "last" committed), then a read_committed consumer reads the topic up to its end.
//   fence BOOTSTRAP TOPIC TXN_ID
//       a producer opens a transaction, a second one with the same id starts; the first one's
//       commit fails ("fenced <exception class>") and the second one commits its own records.
//   timeout BOOTSTRAP TOPIC TXN_ID
//       two producers (TXN_ID-commit, TXN_ID-abort) with transaction.timeout.ms=1000 each open a
//       transaction and say "open"; once a line comes on stdin (the coordinator has aborted
//       both), the first tries to commit ("commit failed <exception class>"), the second aborts
//       ("aborted") and commits a new transaction.
//   ctp BOOTSTRAP IN OUT GROUP TXN_ID COUNT
//       consume-transform-produce: reads IN in GROUP (read_committed), writes each record to OUT
//       with its value upper-cased and a header "from" = "PARTITION:OFFSET", the positions going
//       to the group with sendOffsetsToTransaction.  The first transaction is aborted and the
//       consumer rewound to the group's committed offsets; then it commits until COUNT input
//       records are done.
//   plain BOOTSTRAP TOPIC
//       no transaction: an idempotent producer writes the records given on stdin, one per line
//       "PARTITION KEY VALUE H=V;H=V", then a consumer reads the topic up to its end.
//
// Lines on stdout: "committed N" / "aborted N" per transaction (N records), "record PARTITION
// OFFSET KEY VALUE H=V;H=V" per record read, "offsets P=O,..." (the group's committed offsets
// as the consumer reads them), "fenced CLASS", and "done" at the end.  Any failure is printed
// as "failed <exception>" and exits 1.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class TxnClient {
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

    private static KafkaProducer<byte[], byte[]> producer(String bootstrap, String txnId) {
        return producer(bootstrap, txnId, 60000);
    }

    private static KafkaProducer<byte[], byte[]> producer(String bootstrap, String txnId,
                                                          int timeoutMs) {
        Properties props = new Properties();
        props.put("transaction.timeout.ms", Integer.toString(timeoutMs));
        props.put("bootstrap.servers", bootstrap);
        props.put("transactional.id", txnId);
        props.put("linger.ms", "5");
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        return new KafkaProducer<>(props);
    }

    private static KafkaConsumer<byte[], byte[]> consumer(String bootstrap, String group) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        if (group != null) {
            props.put("group.id", group);
        }
        props.put("isolation.level", "read_committed");
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "earliest");
        props.put("fetch.max.wait.ms", "100");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        return new KafkaConsumer<>(props);
    }

    private static String headers(ConsumerRecord<byte[], byte[]> r) {
        List<String> out = new ArrayList<>();
        for (Header h : r.headers()) {
            out.add(h.key() + "=" + text(h.value()));
        }
        return String.join(";", out);
    }

    private static void sendBatch(KafkaProducer<byte[], byte[]> producer, String topic,
                                  int partitions, String tag) {
        for (int i = 0; i < partitions * 3; i++) {
            ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(
                    topic, i % partitions, bytes(tag + "-k" + i), bytes(tag + "-v" + i));
            record.headers().add("txn", bytes(tag)).add("i", bytes(Integer.toString(i)));
            producer.send(record);
        }
    }

    /** Reads the whole topic as a read_committed consumer (up to the last stable offset). */
    private static void readAll(String bootstrap, String topic) {
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrap, null)) {
            List<TopicPartition> tps = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition()))
                    .collect(Collectors.toList());
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    say("record " + r.partition() + " " + r.offset() + " " + text(r.key()) + " "
                            + text(r.value()) + " " + headers(r));
                }
            }
        }
    }

    static void plain(String bootstrap, String topic) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("acks", "all");
        props.put("enable.idempotence", "true");
        props.put("linger.ms", "5");
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
                                                                     StandardCharsets.UTF_8));
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String[] parts = line.split(" ", -1);
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(
                        topic, Integer.parseInt(parts[0]), bytes(parts[1]), bytes(parts[2]));
                for (String header : parts[3].isEmpty() ? new String[0] : parts[3].split(";")) {
                    String[] kv = header.split("=", 2);
                    record.headers().add(kv[0], bytes(kv[1]));
                }
                producer.send(record).get();  // one at a time: offsets in the order given
            }
        }
        readAll(bootstrap, topic);
    }

    private static int partitionCount(KafkaProducer<byte[], byte[]> producer, String topic) {
        List<PartitionInfo> infos = producer.partitionsFor(topic);
        return infos.size();
    }

    static void basic(String bootstrap, String topic, String txnId) {
        try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap, txnId)) {
            producer.initTransactions();
            int partitions = partitionCount(producer, topic);
            producer.beginTransaction();
            sendBatch(producer, topic, partitions, "first");
            producer.commitTransaction();
            say("committed " + partitions * 3);
            producer.beginTransaction();
            sendBatch(producer, topic, partitions, "aborted");
            producer.flush();
            producer.abortTransaction();
            say("aborted " + partitions * 3);
            producer.beginTransaction();
            sendBatch(producer, topic, partitions, "last");
            producer.commitTransaction();
            say("committed " + partitions * 3);
        }
        readAll(bootstrap, topic);
    }

    static void fence(String bootstrap, String topic, String txnId) {
        try (KafkaProducer<byte[], byte[]> zombie = producer(bootstrap, txnId)) {
            zombie.initTransactions();
            int partitions = partitionCount(zombie, topic);
            zombie.beginTransaction();
            sendBatch(zombie, topic, partitions, "zombie");
            zombie.flush();
            try (KafkaProducer<byte[], byte[]> fresh = producer(bootstrap, txnId)) {
                fresh.initTransactions();
                try {
                    zombie.commitTransaction();
                    say("zombie committed");
                } catch (Exception e) {
                    say("fenced " + e.getClass().getName());
                }
                fresh.beginTransaction();
                sendBatch(fresh, topic, partitions, "fresh");
                fresh.commitTransaction();
                say("committed " + partitions * 3);
            }
        }
        readAll(bootstrap, topic);
    }

    static void timeout(String bootstrap, String topic, String txnId) throws Exception {
        try (KafkaProducer<byte[], byte[]> committer = producer(bootstrap, txnId + "-commit", 1000);
             KafkaProducer<byte[], byte[]> aborter = producer(bootstrap, txnId + "-abort", 1000)) {
            int partitions = partitionCount(committer, topic);
            for (KafkaProducer<byte[], byte[]> p : List.of(committer, aborter)) {
                p.initTransactions();
                p.beginTransaction();
                sendBatch(p, topic, partitions, "expired");
                p.flush();
            }
            say("open");
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                    .readLine();
            try {
                committer.commitTransaction();
                say("committed late");
            } catch (Exception e) {
                say("commit failed " + e.getClass().getName());
            }
            aborter.abortTransaction();
            say("aborted");
            aborter.beginTransaction();
            sendBatch(aborter, topic, partitions, "after");
            aborter.commitTransaction();
            say("committed " + partitions * 3);
        }
        readAll(bootstrap, topic);
    }

    static void ctp(String bootstrap, String in, String out, String group, String txnId,
                    int count) {
        try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap, txnId);
             KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrap, group)) {
            producer.initTransactions();
            consumer.subscribe(List.of(in));
            int done = 0;
            boolean aborted = false;
            while (done < count) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    continue;
                }
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                producer.beginTransaction();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    ProducerRecord<byte[], byte[]> o = new ProducerRecord<>(
                            out, r.partition(), r.key(),
                            text(r.value()).toUpperCase().getBytes(StandardCharsets.UTF_8));
                    for (Header h : r.headers()) {
                        o.headers().add(h);
                    }
                    o.headers().add(new RecordHeader("from",
                            bytes(r.partition() + ":" + r.offset())));
                    producer.send(o);
                    offsets.put(new TopicPartition(r.topic(), r.partition()),
                            new OffsetAndMetadata(r.offset() + 1));
                }
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                if (!aborted) {
                    producer.flush();
                    producer.abortTransaction();
                    aborted = true;
                    say("aborted " + records.count());
                    // start again from what the group has committed
                    Set<TopicPartition> assigned = consumer.assignment();
                    Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(assigned);
                    for (TopicPartition tp : assigned) {
                        OffsetAndMetadata c = committed.get(tp);
                        if (c == null) {
                            consumer.seekToBeginning(List.of(tp));
                        } else {
                            consumer.seek(tp, c.offset());
                        }
                    }
                    continue;
                }
                producer.commitTransaction();
                done += records.count();
                say("committed " + records.count());
            }
            Map<TopicPartition, OffsetAndMetadata> committed =
                    consumer.committed(consumer.assignment());
            Map<Integer, Long> sorted = new TreeMap<>();
            committed.forEach((tp, o) -> sorted.put(tp.partition(), o == null ? -1 : o.offset()));
            say("offsets " + sorted.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                    .collect(Collectors.joining(",")));
        }
    }

    public static void main(String[] args) {
        try {
            switch (args[0]) {
                case "basic" -> basic(args[1], args[2], args[3]);
                case "plain" -> plain(args[1], args[2]);
                case "fence" -> fence(args[1], args[2], args[3]);
                case "timeout" -> timeout(args[1], args[2], args[3]);
                case "ctp" -> ctp(args[1], args[2], args[3], args[4], args[5],
                        Integer.parseInt(args[6]));
                default -> throw new IllegalArgumentException("unknown mode " + args[0]);
            }
            say("done");
        } catch (Exception e) {
            say("failed " + e);
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }
}
