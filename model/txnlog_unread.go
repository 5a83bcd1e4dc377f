package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// UnreadKind says why a record of the coordinators' log could not be read.
type UnreadKind string

const (
	// UnreadNewer is a key or value version newer than txnscope reads: a
	// newer Kafka wrote it, nothing is broken, txnscope is too old to say
	// what it holds.
	UnreadNewer UnreadKind = "newer version"
	// UnreadCorrupt is bytes no version of Kafka writes. Kafka's own
	// coordinator stops loading its partition there too (4.4, seen after a
	// restart: the ids written after it are not found).
	UnreadCorrupt UnreadKind = "corrupt"
)

// Unread is the records of one kind that one partition of the log held and
// that could not be read.
type Unread struct {
	Partition               int32
	Kind                    UnreadKind
	Count                   int
	FirstOffset, LastOffset int64
	// Why is why the first of them could not be read.
	Why string
}

// Unreads counts the records of the log that could not be read, by
// partition and kind (the zero value is empty).
type Unreads struct {
	by map[unreadKey]*Unread
	n  int
}

type unreadKey struct {
	partition int32
	kind      UnreadKind
}

// Add counts r, a record with Unread set, read in offset order.
func (u *Unreads) Add(r TxnLogRecord) {
	if u.by == nil {
		u.by = map[unreadKey]*Unread{}
	}
	u.n++
	k := unreadKey{r.Partition, r.Unread}
	if x, ok := u.by[k]; ok {
		x.Count++
		x.LastOffset = r.Offset
		return
	}
	u.by[k] = &Unread{Partition: r.Partition, Kind: r.Unread, Count: 1, FirstOffset: r.Offset, LastOffset: r.Offset, Why: r.Why}
}

// Count is how many records could not be read.
func (u *Unreads) Count() int { return u.n }

// List is every partition and kind, by partition.
func (u *Unreads) List() []Unread {
	out := make([]Unread, 0, len(u.by))
	for _, x := range u.by {
		out = append(out, *x)
	}
	slices.SortFunc(out, func(a, b Unread) int {
		return cmp.Or(cmp.Compare(a.Partition, b.Partition), strings.Compare(string(a.Kind), string(b.Kind)))
	})
	return out
}

// UnreadLine says in one line what the log held that could not be read
// ("" for nothing): how many records, and where, the first partitions
// with the reason of their first record.
func UnreadLine(us []Unread) string {
	if len(us) == 0 {
		return ""
	}
	n, parts := 0, map[int32]bool{}
	for _, u := range us {
		n += u.Count
		parts[u.Partition] = true
	}
	var b strings.Builder
	if n == 1 {
		b.WriteString("1 record of __transaction_state txnscope cannot read")
	} else {
		fmt.Fprintf(&b, "%d records of __transaction_state txnscope cannot read", n)
	}
	if len(parts) > 1 {
		fmt.Fprintf(&b, ", in %d partitions", len(parts))
	}
	const most = 3
	for i, u := range us {
		if i == most {
			fmt.Fprintf(&b, "; %d more", len(us)-most)
			break
		}
		sep := ": "
		if i > 0 {
			sep = "; "
		}
		b.WriteString(sep + u.Where() + " (" + string(u.Kind) + ": " + u.Why + ")")
	}
	return b.String()
}

// Where is "partition 3 offset 17", or "partition 3 offsets 17–40 (5)".
func (u Unread) Where() string {
	if u.Count == 1 {
		return fmt.Sprintf("partition %d offset %d", u.Partition, u.FirstOffset)
	}
	return fmt.Sprintf("partition %d offsets %d–%d (%d)", u.Partition, u.FirstOffset, u.LastOffset, u.Count)
}
