// Command listrt times the bare ListTransactions round trip, the floor under
// any tool that lists every transactional id: one ListTransactions request to
// every broker at once, timed until the last response has been read and
// decoded. Connections are opened by a warm-up round first, so only the round
// trip is timed. Prints the median of -runs rounds and the number of ids seen.
//
//	go run ./scripts/listrt -bootstrap 127.0.0.1:9092 -runs 7
//	go run ./scripts/listrt -bootstrap 127.0.0.1:9092 -brief   # "MEDIAN_MS IDS" for scripts
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
)

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:9092", "broker to start from")
	runs := flag.Int("runs", 5, "timed rounds (the median is printed)")
	brief := flag.Bool("brief", false, `print only "MEDIAN_MS IDS"`)
	timeout := flag.Duration("timeout", 2*time.Minute, "deadline of the whole run")
	flag.Parse()
	if flag.NArg() > 0 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "listrt: usage: listrt [-bootstrap HOST:PORT] [-runs N>0] [-brief]")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *bootstrap, *runs, *brief); err != nil {
		fmt.Fprintln(os.Stderr, "listrt:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bootstrap string, runs int, brief bool) error {
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
	took := make([]time.Duration, runs)
	for i := range took {
		start := time.Now()
		if ids, err = round(ctx, brokers); err != nil {
			return err
		}
		took[i] = time.Since(start)
	}
	slices.Sort(took)
	median := took[runs/2]
	if runs%2 == 0 {
		median = (took[runs/2-1] + took[runs/2]) / 2
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	if brief {
		fmt.Printf("%.1f %d\n", ms(median), ids)
		return nil
	}
	fmt.Printf("ListTransactions to %d broker(s): %d ids; median %.1f ms of %d (min %.1f, max %.1f)\n",
		len(brokers), ids, ms(median), runs, ms(took[0]), ms(took[runs-1]))
	return nil
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
