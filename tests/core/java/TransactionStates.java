import java.util.TreeSet;

import org.apache.kafka.coordinator.transaction.TransactionState;

/**
 * Prints Kafka's own transaction state table, one state per line:
 * {@code id name expirationAllowed previous,previous,...} (previous states by name, sorted).
 */
public class TransactionStates {
    public static void main(String[] args) {
        for (TransactionState state : TransactionState.values()) {
            TreeSet<String> previous = new TreeSet<>();
            for (TransactionState p : state.validPreviousStates()) {
                previous.add(p.stateName());
            }
            System.out.println(state.id() + " " + state.stateName() + " "
                + state.isExpirationAllowed() + " " + String.join(",", previous));
        }
    }
}
