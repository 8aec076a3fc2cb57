// Kafka's Java Admin looking at transactions, the calls kafka-transactions.sh makes: a
// transactional producer opens a transaction on TOPIC partitions 0 and 1, then the Admin lists
// transactions (all, then only Ongoing ones), describes the transactional id and the producers of
// partition 0; the producer commits and the id is described again.  One line per answer:
//   listed ID STATE          (sorted)
//   described ID STATE PRODUCER_ID EPOCH TIMEOUT TOPIC-PARTITION,...
//   producer PRODUCER_ID EPOCH TXN_START_OFFSET|none
// Run from source:
//   java -cp kafka-clients.jar:slf4j-api.jar TxnAdmin.java BOOTSTRAP TOPIC TRANSACTIONAL_ID
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxnAdmin {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], tid = args[2];
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        Properties producerProps = new Properties();
        producerProps.putAll(props);
        producerProps.put("transactional.id", tid);
        producerProps.put("key.serializer", StringSerializer.class.getName());
        producerProps.put("value.serializer", StringSerializer.class.getName());
        try (Admin admin = Admin.create(props);
             KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k", "v0")).get();
            producer.send(new ProducerRecord<>(topic, 1, "k", "v1")).get();
            list(admin, new ListTransactionsOptions());
            list(admin, new ListTransactionsOptions().filterStates(List.of(TransactionState.ONGOING)));
            describe(admin, tid);
            for (ProducerState p : admin.describeProducers(List.of(new TopicPartition(topic, 0)))
                    .partitionResult(new TopicPartition(topic, 0)).get().activeProducers()) {
                System.out.println("producer " + p.producerId() + " " + p.producerEpoch() + " "
                    + (p.currentTransactionStartOffset().isPresent()
                       ? p.currentTransactionStartOffset().getAsLong() : "none"));
            }
            producer.commitTransaction();
            for (int i = 0; i < 100; i++) {  // the markers are written after EndTxn is answered
                TransactionDescription d = admin.describeTransactions(List.of(tid))
                    .description(tid).get();
                if (d.state() == TransactionState.COMPLETE_COMMIT) {
                    break;
                }
                Thread.sleep(50);
            }
            describe(admin, tid);
        }
    }

    static void list(Admin admin, ListTransactionsOptions options) throws Exception {
        TreeSet<String> lines = new TreeSet<>();
        for (TransactionListing t : admin.listTransactions(options).all().get()) {
            lines.add("listed " + t.transactionalId() + " " + t.state());
        }
        lines.forEach(System.out::println);
        System.out.println("end");
    }

    static void describe(Admin admin, String tid) throws Exception {
        TransactionDescription d = admin.describeTransactions(List.of(tid)).description(tid).get();
        TreeSet<String> partitions = new TreeSet<>();
        for (TopicPartition tp : d.topicPartitions()) {
            partitions.add(tp.toString());
        }
        System.out.println("described " + tid + " " + d.state() + " " + d.producerId() + " "
            + d.producerEpoch() + " " + d.transactionTimeoutMs() + " " + String.join(",", partitions));
    }
}
