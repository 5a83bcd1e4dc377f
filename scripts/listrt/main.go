// Command listrt times the bare ListTransactions round trip, the floor under
// any tool that lists every transactional id: one ListTransactions request to
// every broker at once, timed until the last response has been read and
// decoded. Connections are opened by a warm-up round first, so only the round
// trip is timed. Prints the median of -runs rounds and the number of ids seen.
//
//	go run ./scripts/listrt -bootstrap 127.0.0.1:9092 -runs 7
//	go run ./scripts/listrt -bootstrap 127.0.0.1:9092 -brief   # "MEDIAN_MS IDS" for scripts
//	go run ./scripts/listrt -bootstrap 127.0.0.1:9092 -poll    # also the TUI's steady poll, A B A B
//
// With -poll it also times what the TUI asks the cluster for on each steady
// refresh (kafkaadmin's Poll after a full first Refresh: ListTransactions,
// the describes of what changed, the partitions), alternating with the bare
// rounds so that both see the same machine, and prints the ratio.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/kafkaadmin"
)

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:9092", "broker to start from")
	runs := flag.Int("runs", 5, "timed rounds (the median is printed)")
	brief := flag.Bool("brief", false, `print only "MEDIAN_MS IDS" (with -poll: "MEDIAN_MS IDS POLL_MEDIAN_MS")`)
	poll := flag.Bool("poll", false, "also time txnscope's steady Poll, alternating with the bare rounds")
	timeout := flag.Duration("timeout", 2*time.Minute, "deadline of the whole run")
	flag.Parse()
	if flag.NArg() > 0 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "listrt: usage: listrt [-bootstrap HOST:PORT] [-runs N>0] [-brief]")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *bootstrap, *runs, *brief, *poll); err != nil {
		fmt.Fprintln(os.Stderr, "listrt:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bootstrap string, runs int, brief, poll bool) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	brokers, err := allBrokers(ctx, cl)
	if err != nil {
		return err
	}
	ids, err := round(ctx, brokers) // warm-up: dials and version negotiation
	if err != nil {
		return err
	}
	var steady func() error
	if poll {
		if steady, err = poller(ctx, bootstrap); err != nil {
			return err
		}
	}
	took, polled := make([]time.Duration, runs), make([]time.Duration, runs)
	for i := range took {
		start := time.Now()
		if ids, err = round(ctx, brokers); err != nil {
			return err
		}
		took[i] = time.Since(start)
		if steady != nil {
			start = time.Now()
			if err := steady(); err != nil {
				return err
			}
			polled[i] = time.Since(start)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	floor := median(took)
	switch {
	case brief && poll:
		fmt.Printf("%.1f %d %.1f\n", ms(floor), ids, ms(median(polled)))
	case brief:
		fmt.Printf("%.1f %d\n", ms(floor), ids)
	default:
		fmt.Printf("ListTransactions to %d broker(s): %d ids; median %.1f ms of %d (min %.1f, max %.1f)\n",
			len(brokers), ids, ms(floor), runs, ms(took[0]), ms(took[runs-1]))
		if poll {
			p := median(polled)
			fmt.Printf("txnscope's steady Poll: median %.1f ms of %d (min %.1f, max %.1f), %.2f× the bare round trip\n",
				ms(p), runs, ms(polled[0]), ms(polled[runs-1]), float64(p)/float64(floor))
		}
	}
	return nil
}

// median sorts d and returns its median.
func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	n := len(d)
	if n%2 == 0 {
		return (d[n/2-1] + d[n/2]) / 2
	}
	return d[n/2]
}

// poller connects as the TUI does, takes the first full Refresh untimed
// and returns one steady Poll, each on the snapshot the last one returned.
func poller(ctx context.Context, bootstrap string) (func() error, error) {
	cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: []string{bootstrap}, Timeout: time.Minute})
	if err != nil {
		return nil, err
	}
	prev, err := cl.Refresh(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("first refresh: %w", err)
	}
	return func() error {
		next, err := cl.Poll(ctx, prev)
		if err != nil {
			return fmt.Errorf("poll: %w", err)
		}
		prev = next
		return nil
	}, nil
}

func allBrokers(ctx context.Context, cl *kgo.Client) ([]*kgo.Broker, error) {
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	var brokers []*kgo.Broker
	for _, b := range md.Brokers {
		brokers = append(brokers, cl.Broker(int(b.NodeID)))
	}
	if len(brokers) == 0 {
		return nil, errors.New("the cluster names no brokers")
	}
	return brokers, nil
}

// round sends one ListTransactions to every broker at once and returns the
// number of ids listed once the last response is in.
func round(ctx context.Context, brokers []*kgo.Broker) (int, error) {
	var mu sync.Mutex
	var ids int
	var first error
	var wg sync.WaitGroup
	for _, b := range brokers {
		wg.Go(func() {
			resp, err := kmsg.NewPtrListTransactionsRequest().RequestWith(ctx, b)
			if err == nil {
				err = kerr.ErrorForCode(resp.ErrorCode)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				first = cmp.Or(first, fmt.Errorf("ListTransactions: %w", err))
				return
			}
			ids += len(resp.TransactionStates)
		})
	}
	wg.Wait()
	return ids, first
}
