// A Kafka Streams word count with exactly_once_v2, driven by the Python tests.
//
//   java -cp kafka-streams.jar:kafka-clients.jar:slf4j-api.jar WordCountEos.java \
//        BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR [KEY=VALUE ...]
//
// It splits each line of INPUT into words, regroups them by word (a repartition topic), counts
// them in an in-memory store (its changelog restores it after a crash) and writes every new
// count to OUTPUT as (word, count as a decimal string).  Extra Streams properties come as
// KEY=VALUE.  It reports on stdout, one line each: "state NEW_STATE" on every state change
// (CREATED, REBALANCING, RUNNING, ...), "failed <root cause> in <exception>" for an uncaught
// exception (the client then shuts down; stack trace on stderr), and "closed" once closed (the
// last state lines may follow it).  A line "close" on stdin, or stdin closing, closes the app
// and exits 0.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Properties;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

public class WordCountEos {
    private static synchronized void say(String line) {
        System.out.println(line.replace('\n', ' '));
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        String input = args[2];
        String output = args[3];
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        // every count goes out (no record cache folding updates together)
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        // records go out as they are written, not at the commit, so a crash leaves output of
        // an open transaction (aborted later) in the topics for read_committed readers to skip
        props.put(StreamsConfig.producerPrefix("linger.ms"), "0");
        props.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
        // a killed instance's member leaves the group soon, so a restarted one gets its tasks
        props.put(StreamsConfig.consumerPrefix("session.timeout.ms"), "10000");
        props.put(StreamsConfig.consumerPrefix("heartbeat.interval.ms"), "1000");
        for (int i = 5; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            props.put(kv[0], kv[1]);
        }

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.asList(line.toLowerCase().split("\\W+")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
            .count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("counts"))
                   .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
            .toStream()
            .mapValues(count -> Long.toString(count))
            .to(output, Produced.with(Serdes.String(), Serdes.String()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        streams.setStateListener((now, before) -> say("state " + now));
        streams.setUncaughtExceptionHandler(e -> {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            say("failed " + (root == e ? "" : root + " in ") + e);
            e.printStackTrace();
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        try {
            streams.start();
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null && !"close".equals(line.trim())) {
                }
            }
            if (!streams.close(Duration.ofSeconds(30))) {
                say("failed close timed out");
                System.exit(1);
            }
        } catch (Exception e) {
            say("failed " + e);
            e.printStackTrace();
            System.exit(1);
        }
        say("closed");
        System.exit(0);
    }
}
