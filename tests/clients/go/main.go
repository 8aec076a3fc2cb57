// A client on franz-go (github.com/twmb/franz-go), driven by the conformance tests.
//
//	franz-client produce BOOTSTRAP TOPIC
//	    writes the tests' twelve records: record i to partition i%3, key "k<i>", value "v<i>",
//	    and for odd i the headers h="<i>" and n=""
//	franz-client read BOOTSTRAP TOPIC COUNT
//	    reads COUNT records from the start of its three partitions, without a group, and prints each
//	    as a JSON line {"partition", "offset", "key", "value", "headers": [[k, v], ...]}
//	franz-client group BOOTSTRAP TOPIC GROUP COUNT
//	    joins GROUP (the classic protocol), reads COUNT records, commits them, leaves, and
//	    prints each record's value on a line of its own
//	franz-client consumer-group BOOTSTRAP TOPIC GROUP COUNT
//	    the same with KIP-848's consumer group protocol
//	franz-client share BOOTSTRAP TOPIC GROUP COUNT
//	    joins share group GROUP (KIP-932), reads COUNT records, accepts each, and prints each
//	    as a line "<partition> <delivery count> <value>"; then leaves
//	franz-client txn BOOTSTRAP TOPIC TRANSACTIONAL_ID
//	    three transactions of six records each, record i to partition i%3 with the value
//	    "<outcome>-<i>": "committed" and "committed-again" are committed, "aborted" aborted
//	franz-client admin BOOTSTRAP TOPIC
//	    with kadm: creates TOPIC (two partitions, retention.ms=123456), describes its
//	    retention.ms once its broker knows it, grows it to four partitions, deletes it and waits
//	    until it is gone; prints "retention VALUE SOURCE" and "partitions N"
//
// The Schema Registry commands talk to the registry at URL with pkg/sr, and print what it
// answers as one JSON line:
//
//	franz-client sr-register URL SUBJECT SCHEMA [TYPE]
//	    registers SCHEMA (its text; TYPE AVRO when not given, JSON or PROTOBUF) under SUBJECT and
//	    prints {"subject", "version", "id", "schema"[, "schemaType"]}; a refusal is printed as
//	    the registry's error {"error_code", "message"}, with exit 0
//	franz-client sr-get URL ID
//	    prints the schema of global id ID: {"schema"[, "schemaType"]} (AVRO when absent)
//	franz-client sr-subjects URL ID
//	    prints the subjects that have the schema of global id ID, as a JSON list
//	franz-client sr-versions URL SUBJECT
//	    prints the versions of SUBJECT, as a JSON list
//	franz-client sr-check URL SUBJECT SCHEMA [TYPE]
//	    checks SCHEMA against SUBJECT's latest version (verbose) and prints
//	    {"is_compatible", "messages"}
//	franz-client sr-config URL [SUBJECT]
//	    prints the compatibility level of SUBJECT (the global one without it):
//	    {"compatibilityLevel"}, or the registry's error {"error_code", "message"}
//	franz-client sr-set-config URL SUBJECT LEVEL
//	    sets SUBJECT's compatibility level and prints {"compatibility"}
//	franz-client sr-writer URL HEX
//	    reads the schema id of HEX (a payload in Confluent's wire format: magic byte 0, then
//	    the id in four bytes) with pkg/sr's Serde and prints {"id", "schema"[, "schemaType"]}
//
// Every command connects as the environment says, as a client configured for production would:
// KAFKA_SECURITY_PROTOCOL (PLAINTEXT when unset, SSL, SASL_PLAINTEXT or SASL_SSL),
// KAFKA_SSL_CA_LOCATION (the PEM file of the CA that signed the broker's certificate),
// KAFKA_SASL_MECHANISM (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER) with
// KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD, or KAFKA_SASL_TOKEN for OAUTHBEARER.
//
// Any failure is printed on stderr and exits 1.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/twmb/franz-go/pkg/sr"
)

const partitions = 3

func fail(err error) {
	fmt.Fprintln(os.Stderr, "failed:", err)
	os.Exit(1)
}

// security is what the KAFKA_* variables ask of every connection.
func security() []kgo.Opt {
	protocol := os.Getenv("KAFKA_SECURITY_PROTOCOL")
	var opts []kgo.Opt
	switch protocol {
	case "", "PLAINTEXT", "SASL_PLAINTEXT":
	case "SSL", "SASL_SSL":
		roots := x509.NewCertPool()
		if ca := os.Getenv("KAFKA_SSL_CA_LOCATION"); ca != "" {
			pem, err := os.ReadFile(ca)
			if err != nil {
				fail(err)
			}
			if !roots.AppendCertsFromPEM(pem) {
				fail(fmt.Errorf("no certificate in %s", ca))
			}
		}
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{RootCAs: roots}))
	default:
		fail(fmt.Errorf("KAFKA_SECURITY_PROTOCOL %q is not one this client knows", protocol))
	}
	if !strings.HasPrefix(protocol, "SASL_") {
		return opts
	}
	user, password := os.Getenv("KAFKA_SASL_USERNAME"), os.Getenv("KAFKA_SASL_PASSWORD")
	var mechanism sasl.Mechanism
	switch name := os.Getenv("KAFKA_SASL_MECHANISM"); name {
	case "PLAIN":
		mechanism = plain.Auth{User: user, Pass: password}.AsMechanism()
	case "SCRAM-SHA-256":
		mechanism = scram.Auth{User: user, Pass: password}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		mechanism = scram.Auth{User: user, Pass: password}.AsSha512Mechanism()
	case "OAUTHBEARER":
		mechanism = oauth.Auth{Token: os.Getenv("KAFKA_SASL_TOKEN")}.AsMechanism()
	default:
		fail(fmt.Errorf("KAFKA_SASL_MECHANISM %q is not one this client knows", name))
	}
	return append(opts, kgo.SASL(mechanism))
}

func client(opts ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(append(security(), opts...)...)
	if err != nil {
		fail(err)
	}
	return cl
}

func produce(bootstrap, topic string) {
	cl := client(kgo.SeedBrokers(bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 12; i++ {
		r := &kgo.Record{Topic: topic, Partition: int32(i % partitions),
			Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i))}
		if i%2 == 1 {
			r.Headers = []kgo.RecordHeader{{Key: "h", Value: []byte(strconv.Itoa(i))},
				{Key: "n", Value: []byte{}}}
		}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			fail(err)
		}
	}
}

type line struct {
	Partition int32       `json:"partition"`
	Offset    int64       `json:"offset"`
	Key       string      `json:"key"`
	Value     string      `json:"value"`
	Headers   [][2]string `json:"headers"`
}

func read(bootstrap, topic string, count int) {
	start := map[int32]kgo.Offset{}
	for p := int32(0); p < partitions; p++ {
		start[p] = kgo.NewOffset().AtStart()
	}
	cl := client(kgo.SeedBrokers(bootstrap),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := json.NewEncoder(os.Stdout)
	consume(ctx, cl, count, func(r *kgo.Record) {
		headers := [][2]string{}
		for _, h := range r.Headers {
			headers = append(headers, [2]string{h.Key, string(h.Value)})
		}
		out.Encode(line{r.Partition, r.Offset, string(r.Key), string(r.Value), headers})
	}, nil)
}

func group(bootstrap, topic, group string, count int, serverSide bool) {
	opts := []kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic),
		kgo.ConsumerGroup(group), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(100 * time.Millisecond)}
	if serverSide { // KIP-848: the coordinator assigns; franz-go wants a range or sticky balancer
		opts = append(opts, kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()))
	}
	cl := client(opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	consume(ctx, cl, count, func(r *kgo.Record) { fmt.Println(string(r.Value)) }, func() {
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			fail(err)
		}
	})
	cl.LeaveGroup()
	cl.Close()
}

// consume polls until count records have gone to each, calling after (when given) once the
// records of each poll are handled.
func consume(ctx context.Context, cl *kgo.Client, count int, each func(*kgo.Record),
	after func()) {
	for seen := 0; seen < count; {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			fail(fmt.Errorf("%d of %d records read: %w", seen, count, err))
		}
		fetches.EachError(func(t string, p int32, err error) { fail(err) })
		fetches.EachRecord(func(r *kgo.Record) {
			each(r)
			seen++
		})
		if after != nil {
			after()
		}
	}
}

func share(bootstrap, topic, group string, count int) {
	cl := client(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic), kgo.ShareGroup(group))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for seen := 0; seen < count; {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			fail(fmt.Errorf("read %d of %d records: %w", seen, count, err))
		}
		fetches.EachError(func(t string, p int32, err error) { fail(err) })
		fetches.EachRecord(func(r *kgo.Record) {
			fmt.Printf("%d %d %s\n", r.Partition, r.DeliveryCount(), r.Value)
			seen++
		})
	}
	cl.MarkAcks(kgo.AckAccept)
	if err := cl.FlushAcks(ctx); err != nil {
		fail(err)
	}
}

func txn(bootstrap, topic, id string) {
	cl := client(kgo.SeedBrokers(bootstrap), kgo.TransactionalID(id),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, outcome := range []string{"committed", "aborted", "committed-again"} {
		if err := cl.BeginTransaction(); err != nil {
			fail(err)
		}
		for i := 0; i < partitions*2; i++ {
			r := &kgo.Record{Topic: topic, Partition: int32(i % partitions),
				Value: []byte(fmt.Sprintf("%s-%d", outcome, i))}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				fail(err)
			}
		}
		end := kgo.TryCommit
		if outcome == "aborted" {
			end = kgo.TryAbort
		}
		if err := cl.EndTransaction(ctx, end); err != nil {
			fail(err)
		}
	}
}

// until retries f every 100 ms until it reports done, for at most 30 s.
func until(what string, f func() (bool, error)) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		done, err := f()
		if done {
			return
		}
		if time.Now().After(deadline) {
			fail(fmt.Errorf("timed out waiting for %s (last error: %v)", what, err))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func admin(bootstrap, topic string) {
	cl := client(kgo.SeedBrokers(bootstrap))
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	retention := "123456"
	created, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"retention.ms": &retention},
		topic)
	if err == nil {
		err = created.Err
	}
	if err != nil {
		fail(err)
	}
	// Kafka's brokers learn of a new topic a moment after its controller has made it
	until("the new topic's configs", func() (bool, error) {
		described, err := adm.DescribeTopicConfigs(ctx, topic)
		if err != nil {
			return false, err
		}
		found, err := described.On(topic, nil)
		if err == nil {
			err = found.Err
		}
		if err != nil {
			return false, err
		}
		for _, c := range found.Configs {
			if c.Key == "retention.ms" && c.Value != nil {
				fmt.Printf("retention %s %s\n", *c.Value, c.Source)
				return true, nil
			}
		}
		return false, nil
	})
	grown, err := adm.UpdatePartitions(ctx, 4, topic)
	if err == nil {
		_, err = grown.On(topic, nil)
	}
	if err != nil {
		fail(err)
	}
	var count int
	until("four partitions", func() (bool, error) {
		details, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return false, err
		}
		count = len(details[topic].Partitions)
		return count == 4, nil
	})
	fmt.Printf("partitions %d\n", count)
	deleted, err := adm.DeleteTopics(ctx, topic)
	if err == nil {
		_, err = deleted.On(topic, nil)
	}
	if err != nil {
		fail(err)
	}
	until("the topic gone", func() (bool, error) {
		details, err := adm.ListTopics(ctx)
		if err != nil {
			return false, err
		}
		return !details.Has(topic), nil
	})
}

// registry is a pkg/sr client of the registry at url, and a context that ends in 30 s.
func registry(url string) (*sr.Client, context.Context, context.CancelFunc) {
	cl, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	return cl, ctx, cancel
}

func schemaType(name string) sr.SchemaType {
	var t sr.SchemaType
	if err := t.UnmarshalText([]byte(name)); err != nil {
		fail(err)
	}
	return t
}

// answer prints v as a JSON line; a refusal of the registry (a ResponseError) is printed as
// its error body instead when refusalIsAnswer, and fails the command otherwise.
func answer(v any, err error, refusalIsAnswer bool) {
	var refused *sr.ResponseError
	if err != nil && refusalIsAnswer && errors.As(err, &refused) {
		v = map[string]any{"error_code": refused.ErrorCode, "message": refused.Message}
	} else if err != nil {
		fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(v); err != nil {
		fail(err)
	}
}

func srRegister(url, subject, text, typ string) {
	cl, ctx, cancel := registry(url)
	defer cancel()
	created, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: text, Type: schemaType(typ)})
	answer(created, err, true)
}

func srGet(url string, id int) {
	cl, ctx, cancel := registry(url)
	defer cancel()
	schema, err := cl.SchemaByID(ctx, id)
	answer(schema, err, false)
}

func srSubjects(url string, id int) {
	cl, ctx, cancel := registry(url)
	defer cancel()
	subjects, err := cl.SubjectsByID(ctx, id)
	answer(subjects, err, false)
}

func srVersions(url, subject string) {
	cl, ctx, cancel := registry(url)
	defer cancel()
	versions, err := cl.SubjectVersions(ctx, subject)
	answer(versions, err, false)
}

func srCheck(url, subject, text, typ string) {
	cl, ctx, cancel := registry(url)
	defer cancel()
	checked, err := cl.CheckCompatibility(sr.WithParams(ctx, sr.Verbose), subject, -1,
		sr.Schema{Schema: text, Type: schemaType(typ)})
	answer(checked, err, false)
}

func srConfig(url, subject string) {
	cl, ctx, cancel := registry(url)
	defer cancel()
	got := cl.Compatibility(ctx, subject)[0]
	answer(map[string]string{"compatibilityLevel": got.Level.String()}, got.Err, true)
}

func srSetConfig(url, subject, level string) {
	cl, ctx, cancel := registry(url)
	defer cancel()
	var compat sr.CompatibilityLevel
	if err := compat.UnmarshalText([]byte(level)); err != nil {
		fail(err)
	}
	set := cl.SetCompatibility(ctx, sr.SetCompatibility{Level: compat}, subject)[0]
	answer(map[string]string{"compatibility": set.Level.String()}, set.Err, false)
}

func srWriter(url, payload string) {
	raw, err := hex.DecodeString(payload)
	if err != nil {
		fail(err)
	}
	var serde sr.Serde
	id, _, err := serde.DecodeID(raw)
	if err != nil {
		fail(err)
	}
	cl, ctx, cancel := registry(url)
	defer cancel()
	schema, err := cl.SchemaByID(ctx, id)
	answer(struct {
		ID int `json:"id"`
		sr.Schema
	}{id, schema}, err, false)
}

func number(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fail(err)
	}
	return n
}

func main() {
	args := os.Args[1:]
	switch {
	case len(args) == 3 && args[0] == "produce":
		produce(args[1], args[2])
	case len(args) == 4 && args[0] == "read":
		read(args[1], args[2], number(args[3]))
	case len(args) == 5 && args[0] == "group":
		group(args[1], args[2], args[3], number(args[4]), false)
	case len(args) == 5 && args[0] == "consumer-group":
		group(args[1], args[2], args[3], number(args[4]), true)
	case len(args) == 5 && args[0] == "share":
		share(args[1], args[2], args[3], number(args[4]))
	case len(args) == 4 && args[0] == "txn":
		txn(args[1], args[2], args[3])
	case len(args) == 3 && args[0] == "admin":
		admin(args[1], args[2])
	case (len(args) == 4 || len(args) == 5) && args[0] == "sr-register":
		srRegister(args[1], args[2], args[3], append(args, "AVRO")[4])
	case len(args) == 3 && args[0] == "sr-get":
		srGet(args[1], number(args[2]))
	case len(args) == 3 && args[0] == "sr-subjects":
		srSubjects(args[1], number(args[2]))
	case len(args) == 3 && args[0] == "sr-versions":
		srVersions(args[1], args[2])
	case (len(args) == 4 || len(args) == 5) && args[0] == "sr-check":
		srCheck(args[1], args[2], args[3], append(args, "AVRO")[4])
	case (len(args) == 2 || len(args) == 3) && args[0] == "sr-config":
		srConfig(args[1], append(args, sr.GlobalSubject)[2])
	case len(args) == 4 && args[0] == "sr-set-config":
		srSetConfig(args[1], args[2], args[3])
	case len(args) == 3 && args[0] == "sr-writer":
		srWriter(args[1], args[2])
	default:
		fail(fmt.Errorf("usage: franz-client produce|read|group|consumer-group|share|txn|admin " +
			"BOOTSTRAP TOPIC [GROUP|TRANSACTIONAL_ID] [COUNT], or franz-client sr-... URL ... " +
			"(see main.go)"))
	}
}
