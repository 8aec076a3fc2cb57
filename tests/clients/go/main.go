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
//
// Any failure is printed on stderr and exits 1.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const partitions = 3

func fail(err error) {
	fmt.Fprintln(os.Stderr, "failed:", err)
	os.Exit(1)
}

func client(opts ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(opts...)
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

func group(bootstrap, topic, group string, count int) {
	cl := client(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.FetchMaxWait(100*time.Millisecond))
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
		group(args[1], args[2], args[3], number(args[4]))
	default:
		fail(fmt.Errorf("usage: franz-client produce|read|group BOOTSTRAP TOPIC [GROUP] [COUNT]"))
	}
}
