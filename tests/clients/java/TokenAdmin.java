// Delegation tokens through the stock Java Admin (createDelegationToken, describeDelegationToken,
// renewDelegationToken, expireDelegationToken), driven by tests/clients/test_delegation_tokens.py.
// The Admin takes its security settings from a properties file, as an application would.
//
//   java -cp kafka-clients.jar:slf4j-api.jar TokenAdmin CONFIG BOOTSTRAP COMMAND...
//
// Each COMMAND is one argument, words separated by spaces, run in order on one Admin:
//   "create [owner=TYPE:NAME] [renewers=TYPE:NAME,...] [max=MS]"
//   "describe [owners=TYPE:NAME,...]"        (no owners= : every token the caller may see)
//   "renew [hmac=BASE64] [period=MS]"         (no hmac= : the token created last)
//   "expire [hmac=BASE64] [period=MS]"
//   "await count=N [owners=TYPE:NAME,...]"   (describe until N tokens are seen, for up to 30 s:
//                                             Kafka's brokers learn of a token the controller
//                                             made or removed from the metadata log)
//
// Lines on stdout: "created TOKEN", "token TOKEN" for each token described (after
// "described N"), "renewed EXPIRY", "expired EXPIRY", where TOKEN is "ID HMAC owner=P
// requester=P renewers=[P, ...] issue=MS expiry=MS max=MS"; a command that fails prints
// "error CLASS: MESSAGE" and the run goes on.  "done" at the end.

import java.io.FileReader;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.DescribeDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.clients.admin.RenewDelegationTokenOptions;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.apache.kafka.common.security.token.delegation.TokenInformation;

public class TokenAdmin {
    private static byte[] lastHmac;

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static Properties config(String file, String bootstrap) throws IOException {
        Properties props = new Properties();
        try (Reader in = new FileReader(file, StandardCharsets.UTF_8)) {
            props.load(in);
        }
        props.put("bootstrap.servers", bootstrap);
        props.put("default.api.timeout.ms", "30000");
        return props;
    }

    private static List<KafkaPrincipal> principals(String list) {
        List<KafkaPrincipal> out = new ArrayList<>();
        if (list != null && !list.isEmpty()) {
            for (String p : list.split(",")) {
                int colon = p.indexOf(':');
                out.add(new KafkaPrincipal(p.substring(0, colon), p.substring(colon + 1)));
            }
        }
        return out;
    }

    private static String text(DelegationToken token) {
        TokenInformation info = token.tokenInfo();
        return info.tokenId() + " " + token.hmacAsBase64String() + " owner=" + info.owner()
            + " requester=" + info.tokenRequester() + " renewers=" + info.renewers()
            + " issue=" + info.issueTimestamp() + " expiry=" + info.expiryTimestamp()
            + " max=" + info.maxTimestamp();
    }

    private static void run(Admin admin, String command) throws Exception {
        String[] words = command.trim().split(" +");
        Map<String, String> opts = new HashMap<>();
        for (int i = 1; i < words.length; i++) {
            int eq = words[i].indexOf('=');
            opts.put(words[i].substring(0, eq), words[i].substring(eq + 1));
        }
        byte[] hmac = opts.containsKey("hmac") ? Base64.getDecoder().decode(opts.get("hmac"))
                                              : lastHmac;
        long period = Long.parseLong(opts.getOrDefault("period", "-1"));
        switch (words[0]) {
            case "create": {
                CreateDelegationTokenOptions options = new CreateDelegationTokenOptions()
                    .renewers(principals(opts.get("renewers")))
                    .maxLifetimeMs(Long.parseLong(opts.getOrDefault("max", "-1")));
                if (opts.containsKey("owner")) {
                    options.owner(principals(opts.get("owner")).get(0));
                }
                DelegationToken token = admin.createDelegationToken(options)
                    .delegationToken().get();
                lastHmac = token.hmac();
                say("created " + text(token));
                break;
            }
            case "describe": {
                DescribeDelegationTokenOptions options = new DescribeDelegationTokenOptions();
                if (opts.containsKey("owners")) {
                    options.owners(principals(opts.get("owners")));
                }
                List<DelegationToken> tokens = admin.describeDelegationToken(options)
                    .delegationTokens().get();
                say("described " + tokens.size());
                for (DelegationToken token : tokens) {
                    say("token " + text(token));
                }
                break;
            }
            case "await": {
                DescribeDelegationTokenOptions options = new DescribeDelegationTokenOptions();
                if (opts.containsKey("owners")) {
                    options.owners(principals(opts.get("owners")));
                }
                int want = Integer.parseInt(opts.get("count"));
                long deadline = System.currentTimeMillis() + 30_000;
                int seen;
                while ((seen = admin.describeDelegationToken(options).delegationTokens().get()
                        .size()) != want && System.currentTimeMillis() < deadline) {
                    Thread.sleep(50);
                }
                if (seen != want) {
                    say("error await: " + seen + " tokens described, not " + want);
                }
                break;
            }
            case "renew":
                say("renewed " + admin.renewDelegationToken(
                    hmac, new RenewDelegationTokenOptions().renewTimePeriodMs(period))
                    .expiryTimestamp().get());
                break;
            case "expire":
                say("expired " + admin.expireDelegationToken(
                    hmac, new ExpireDelegationTokenOptions().expiryTimePeriodMs(period))
                    .expiryTimestamp().get());
                break;
            default:
                throw new IllegalArgumentException("unknown command " + words[0]);
        }
    }

    public static void main(String[] args) {
        try (Admin admin = Admin.create(config(args[0], args[1]))) {
            for (int i = 2; i < args.length; i++) {
                try {
                    run(admin, args[i]);
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause() == null ? e : e.getCause();
                    say("error " + cause.getClass().getName() + ": " + cause.getMessage());
                }
            }
            say("done");
        } catch (Throwable t) {
            say("failed " + t);
            t.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }
}
