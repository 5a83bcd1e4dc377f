package jsonout_test

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/model"
)

func TestBase64(t *testing.T) {
	if got := jsonout.Base64("orders-0-1"); got != "" {
		t.Errorf("Base64 of a UTF-8 id = %q, want none", got)
	}
	if got := jsonout.Base64("a-\xff-0-1"); got != "YS3/LTAtMQ==" {
		t.Errorf("Base64(a-\\xff-0-1) = %q", got)
	}
	if got := jsonout.Base64List([]string{"a", "b"}); got != nil {
		t.Errorf("Base64List of UTF-8 ids = %v, want nil", got)
	}
	got := jsonout.Base64List([]string{"a", "\x9b"})
	if len(got) != 2 || got[0] != nil || got[1] == nil || *got[1] != "mw==" {
		t.Errorf("Base64List = %v, want [nil mw==]", got)
	}
}

// exactStrings walks a decoded document and calls found with each string
// field's path ("jobs.pinned.transactional_id") and exact value: the bytes
// of its _base64 companion when it has one, the string otherwise. A
// companion must be there exactly when the string is not UTF-8.
func exactStrings(t *testing.T, v any, path string, found func(path, exact string)) {
	t.Helper()
	exact := func(p, s string, b any) {
		if b == nil {
			found(p, s)
			return
		}
		raw, err := base64.StdEncoding.DecodeString(b.(string))
		if err != nil || utf8.Valid(raw) {
			t.Errorf("%s: companion %q of %q is not base64 of bytes that are not UTF-8 (%v)", p, b, s, err)
			return
		}
		if shown := roundTrip(t, string(raw)); shown != s {
			t.Errorf("%s: companion %q is not the bytes of %q (they print %q)", p, b, s, shown)
		}
		found(p, string(raw))
	}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := path + "." + k
			if path == "" {
				p = k
			}
			switch x := x.(type) {
			case string:
				exact(p, x, v[k+"_base64"])
			case []any:
				companion, _ := v[k+"_base64"].([]any)
				if companion != nil && len(companion) != len(x) {
					t.Errorf("%s: %d companions for %d names", p, len(companion), len(x))
					companion = nil
				}
				for i, e := range x {
					if s, ok := e.(string); ok {
						var b any
						if companion != nil {
							b = companion[i]
						}
						exact(p, s, b)
					} else {
						exactStrings(t, e, p, found)
					}
				}
			default:
				exactStrings(t, x, p, found)
			}
		}
	}
}

// roundTrip is what a reader of the JSON gets for s.
func roundTrip(t *testing.T, s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExportExactForIDsThatAreNotUTF8: two ids that differ only in bytes
// that are not UTF-8 print the same transactional_id (U+FFFD for each bad
// byte), and every field naming them — transactions, jobs and their
// subtasks, pins, stuck groups and their blockers, the replay — carries
// their exact bytes in its _base64 companion; so do the groups and job
// names. The document stays valid against the published schema.
func TestExportExactForIDsThatAreNotUTF8(t *testing.T) {
	now := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	ids := []string{"sink-\xff-0-7", "sink-\xfe-0-7"}
	groups := []string{"billing-\xff", "billing-\xfe"}
	s := &model.Snapshot{TakenAt: now, BrokerMaxTimeoutMs: 900_000}
	for i, id := range ids {
		tp := model.TopicPartition{Topic: "orders", Partition: int32(i)}
		tx := model.Txn{ID: id, State: model.Ongoing, ProducerID: int64(11 + i), ProducerEpoch: 1, TimeoutMs: 60_000, Described: true,
			Partitions: []model.TopicPartition{tp}}
		tx.SetStart(now.Add(-time.Minute))
		s.Txns = append(s.Txns, tx, model.Txn{ID: id[:len(id)-1] + "6", State: model.CompleteCommit, TimeoutMs: 60_000, Described: true})
		s.Partitions = append(s.Partitions, model.Partition{TopicPartition: tp, Leader: 1, HighWatermark: 120, LastStableOffset: 100,
			Producers: []model.Producer{{ProducerID: int64(11 + i), ProducerEpoch: 1, CurrentTxnStartOffset: 100, LastWriteMs: model.WriteMs(now)}}})
		s.GroupCommits = append(s.GroupCommits, model.GroupCommit{Group: groups[i], State: "Stable", TopicPartition: tp, Offset: 100})
	}
	s.Sort()
	h := model.NewHistory(100)
	h.Add([]model.Event{{At: now.Add(-2 * time.Minute), ID: ids[0][:len(ids[0])-1] + "6", Kind: model.Committed},
		{At: now.Add(-2 * time.Minute), ID: ids[1][:len(ids[1])-1] + "6", Kind: model.Committed}})
	doc := jsonout.Export(s, h, now)
	doc.Replay = jsonout.ExportReplay(model.Replayed{Events: []model.Event{{At: now, ID: ids[0], Kind: model.Aborted}, {At: now, ID: ids[1], Kind: model.Aborted}}},
		now.Add(-time.Hour), 10)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	testutil.CheckSnapshotJSON(t, b)
	if roundTrip(t, ids[0]) != roundTrip(t, ids[1]) {
		t.Fatalf("the two ids print differently: %q, %q", roundTrip(t, ids[0]), roundTrip(t, ids[1]))
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	seen := map[string][]string{}
	exactStrings(t, v, "", func(path, exact string) { seen[path] = append(seen[path], exact) })
	want := map[string][]string{
		"transactions.transactional_id":      ids,
		"jobs.open":                          ids,
		"jobs.oldest_open":                   ids,
		"jobs.name":                          {"sink-\xff", "sink-\xfe"},
		"jobs.pinned.transactional_id":       ids,
		"jobs.pinned.stuck_groups":           groups,
		"jobs.stuck_groups":                  groups,
		"jobs.subtasks.open":                 ids,
		"pinned_partitions.transactional_id": ids,
		"pinned_partitions.stuck_groups":     groups,
		"stuck_groups.group":                 groups,
		"stuck_groups.blockers":              ids,
		"replay.events.transactional_id":     ids,
	}
	for path, exact := range want {
		for _, x := range exact {
			if !slices.Contains(seen[path], x) {
				t.Errorf("%s: %q is not there exactly (%q)", path, x, seen[path])
			}
		}
	}
}

func TestBase64ListOfUTF8AllocatesNothing(t *testing.T) {
	ids := []string{"orders-0-1", "orders-0-2", "注文-0-3"}
	if n := testing.AllocsPerRun(100, func() { _ = jsonout.Base64List(ids) }); n != 0 {
		t.Errorf("%v allocations for UTF-8 names, want 0", n)
	}
}
