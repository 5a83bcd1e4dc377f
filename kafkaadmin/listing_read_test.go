package kafkaadmin

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// randomListing is a ListTransactions response as a broker encodes it (kmsg's
// encoder), with states known and unknown, odd ids, unknown state filters
// and tagged fields.
func randomListing(rng *rand.Rand, version int16) (*kmsg.ListTransactionsResponse, []byte) {
	resp := kmsg.NewPtrListTransactionsResponse()
	resp.Version = version
	resp.ThrottleMillis = rng.Int32N(100)
	resp.ErrorCode = int16(rng.IntN(2) * 15)
	for range rng.IntN(3) {
		resp.UnknownStateFilters = append(resp.UnknownStateFilters, fmt.Sprint("Filter", rng.IntN(9)))
	}
	states := []string{"Ongoing", "CompleteCommit", "CompleteAbort", "Empty", "PrepareCommit", "SomethingNew", ""}
	ids := []string{"", "a", "orders-enricher-v1-3-1187", "\x1b[2Jé", string(make([]byte, 300))}
	for i := range rng.IntN(200) {
		st := kmsg.NewListTransactionsResponseTransactionState()
		st.TransactionalID = ids[rng.IntN(len(ids))] + fmt.Sprint(i)
		st.ProducerID = rng.Int64() - rng.Int64()
		st.TransactionState = states[rng.IntN(len(states))]
		if rng.IntN(10) == 0 {
			st.UnknownTags.Set(uint32(rng.IntN(5)+1), []byte("tag"))
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	if rng.IntN(5) == 0 {
		resp.UnknownTags.Set(7, []byte{1, 2, 3})
	}
	return resp, resp.AppendTo(nil)
}

// readListing reads what kmsg reads, at every version.
func TestReadListingMatchesKmsg(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 400 {
		version := int16(round % int(kmsg.NewPtrListTransactionsResponse().MaxVersion()+1))
		want, raw := randomListing(rng, version)
		got, throttle, code, err := readListing(raw)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if throttle != want.ThrottleMillis || code != want.ErrorCode || got.len() != len(want.TransactionStates) {
			t.Fatalf("round %d: throttle %d code %d, %d ids; want %d %d %d", round, throttle, code, got.len(), want.ThrottleMillis, want.ErrorCode, len(want.TransactionStates))
		}
		for k, st := range want.TransactionStates {
			if got.ids[k] != st.TransactionalID || got.ls[k].pid != st.ProducerID || got.ls[k].state != model.StateOf(st.TransactionState) {
				t.Fatalf("round %d, id %d: %q %d %q, want %q %d %q", round, k, got.ids[k], got.ls[k].pid, got.ls[k].state, st.TransactionalID, st.ProducerID, st.TransactionState)
			}
		}
	}
}

// A response cut short, or with bytes after it, is an error, never a panic
// or a partial listing.
func TestReadListingRefusesBrokenResponses(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	_, raw := randomListing(rng, 0)
	for n := range len(raw) {
		if _, _, _, err := readListing(raw[:n]); err == nil {
			t.Fatalf("read %d of %d bytes without an error", n, len(raw))
		}
	}
	if _, _, _, err := readListing(append(raw, 0)); err == nil {
		t.Fatal("a trailing byte read without an error")
	}
}

func FuzzReadListing(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 5 {
		_, raw := randomListing(rng, 0)
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, _, _, err := readListing(raw)
		if err != nil {
			return
		}
		var want kmsg.ListTransactionsResponse
		if kerr := want.ReadFrom(raw); kerr != nil {
			t.Fatalf("read what kmsg refuses: %v", kerr)
		}
		if got.len() != len(want.TransactionStates) {
			t.Fatalf("%d ids, kmsg %d", got.len(), len(want.TransactionStates))
		}
	})
}
