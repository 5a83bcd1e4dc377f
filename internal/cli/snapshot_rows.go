package cli

import (
	"math"
	"strconv"
	"time"

	"github.com/txnscope/txnscope/internal/jsonout"
)

// appendTxnRow appends t as streamJSON's encode(&t, "    ") writes it,
// byte for byte, without reflection; ok is false, and nothing is appended,
// when one of its strings is not plain printable ASCII (or its ratio is not
// a number): encoding/json then escapes, and escape.JSON rewrites. At
// 2,000,000 ids encoding/json and the indenting were 3 s of a snapshot.
func appendTxnRow(dst []byte, t *jsonout.TxnJSON) (_ []byte, ok bool) {
	if !plainJSON(t.TransactionalID) || !plainJSON(t.TransactionalIDBase64) || !plainJSON(t.State.String()) ||
		t.TimeoutRatio != nil && (math.IsNaN(*t.TimeoutRatio) || math.IsInf(*t.TimeoutRatio, 0)) {
		return dst, false
	}
	for _, p := range t.Partitions {
		if !plainJSON(p.Topic) {
			return dst, false
		}
	}
	for _, p := range t.Problems {
		if !plainJSON(p) {
			return dst, false
		}
	}
	if !jsonTime(t.StartTime) {
		return dst, false
	}
	for _, f := range t.RecentTransactions {
		if !plainJSON(string(f.Outcome)) || !jsonTime(f.Begin) || !jsonTime(&f.End) {
			return dst, false
		}
	}
	const in = "\n      " // a row's fields: the rows' prefix, one level in
	dst = append(dst, "{"+in+`"transactional_id": `...)
	dst = appendQuoted(dst, t.TransactionalID)
	if t.TransactionalIDBase64 != "" {
		dst = append(dst, ","+in+`"transactional_id_base64": `...)
		dst = appendQuoted(dst, t.TransactionalIDBase64)
	}
	dst = append(dst, ","+in+`"state": `...)
	dst = appendQuoted(dst, t.State.String())
	dst = append(dst, ","+in+`"producer_id": `...)
	dst = strconv.AppendInt(dst, t.ProducerID, 10)
	dst = append(dst, ","+in+`"producer_epoch": `...)
	dst = strconv.AppendInt(dst, int64(t.ProducerEpoch), 10)
	dst = append(dst, ","+in+`"coordinator": `...)
	dst = strconv.AppendInt(dst, int64(t.Coordinator), 10)
	dst = append(dst, ","+in+`"timeout_ms": `...)
	dst = strconv.AppendInt(dst, int64(t.TimeoutMs), 10)
	dst = append(dst, ","+in+`"start_time": `...)
	dst = appendTime(dst, t.StartTime)
	dst = append(dst, ","+in+`"age_ms": `...)
	dst = appendIntPtr(dst, t.AgeMs)
	dst = append(dst, ","+in+`"timeout_ratio": `...)
	if t.TimeoutRatio == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendFloat(dst, *t.TimeoutRatio)
	}
	dst = append(dst, ","+in+`"partitions": `...)
	dst = appendList(dst, len(t.Partitions), in, func(dst []byte, i int) []byte {
		dst = append(dst, in+"  {"+in+`    "topic": `...)
		dst = appendQuoted(dst, t.Partitions[i].Topic)
		dst = append(dst, ","+in+`    "partition": `...)
		dst = strconv.AppendInt(dst, int64(t.Partitions[i].Partition), 10)
		return append(dst, in+"  }"...)
	})
	for _, f := range [...]struct {
		name string
		v    int
	}{{"commits_seen", t.CommitsSeen}, {"aborts_seen", t.AbortsSeen}, {"commits_5m", t.Commits5m},
		{"aborts_5m", t.Aborts5m}, {"commits_60m", t.Commits60m}, {"aborts_60m", t.Aborts60m}} {
		dst = append(dst, ","+in+`"`...)
		dst = append(dst, f.name...)
		dst = append(dst, `": `...)
		dst = strconv.AppendInt(dst, int64(f.v), 10)
	}
	dst = append(dst, ","+in+`"recent_transactions": `...)
	dst = appendList(dst, len(t.RecentTransactions), in, func(dst []byte, i int) []byte {
		return appendFinished(dst, &t.RecentTransactions[i])
	})
	dst = append(dst, ","+in+`"problems": `...)
	dst = appendList(dst, len(t.Problems), in, func(dst []byte, i int) []byte {
		return appendQuoted(append(dst, in+"  "...), t.Problems[i])
	})
	return append(dst, "\n    }\n"...), true
}

// appendList writes a list of n elements, each by elem, "[]" when empty,
// its "]" on a line of its own indented by in, as the indenting leaves it.
func appendList(dst []byte, n int, in string, elem func(dst []byte, i int) []byte) []byte {
	if n == 0 {
		return append(dst, "[]"...)
	}
	dst = append(dst, '[')
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = elem(dst, i)
	}
	return append(dst, in+"]"...)
}

func appendFinished(dst []byte, f *jsonout.FinishedTxnJSON) []byte {
	const in = "\n          " // a recent transaction's fields, two levels deeper than a row's
	dst = append(dst, "\n        {"+in+`"begin": `...)
	dst = appendTime(dst, f.Begin)
	dst = append(dst, ","+in+`"end": `...)
	end := f.End
	dst = appendTime(dst, &end)
	dst = append(dst, ","+in+`"duration_ms": `...)
	dst = appendIntPtr(dst, f.DurationMs)
	dst = append(dst, ","+in+`"outcome": `...)
	dst = appendQuoted(dst, string(f.Outcome))
	dst = append(dst, ","+in+`"partitions": `...)
	if f.Partitions == nil {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, int64(*f.Partitions), 10)
	}
	dst = append(dst, ","+in+`"producer_id": `...)
	dst = strconv.AppendInt(dst, f.ProducerID, 10)
	dst = append(dst, ","+in+`"producer_epoch": `...)
	dst = strconv.AppendInt(dst, int64(f.ProducerEpoch), 10)
	return append(dst, "\n        }"...)
}

// plainJSON reports whether encoding/json writes s as it is between quotes,
// and escape.JSON leaves it alone: printable ASCII, no quote or backslash.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// jsonTime reports whether time.Time's MarshalJSON writes t (nil: null)
// as AppendFormat does: it refuses years past four digits, and UTC is all
// the document writes.
func jsonTime(t *time.Time) bool {
	return t == nil || t.Location() == time.UTC && t.Year() >= 0 && t.Year() <= 9999
}

func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

func appendIntPtr(dst []byte, v *int64) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, *v, 10)
}

// appendTime is time.Time's MarshalJSON (RFC 3339 with nanoseconds), or null.
func appendTime(dst []byte, t *time.Time) []byte {
	if t == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

// appendFloat writes f as encoding/json does: the shortest form that reads
// back the same, with an exponent only for the very small or large.
func appendFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 as e-9, as encoding/json writes it.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// appendPartitionRow is appendTxnRow for a partition: at 2,000,000 ids
// the partitions list a producer for each id.
func appendPartitionRow(dst []byte, p *jsonout.PartitionJSON) (_ []byte, ok bool) {
	if !plainJSON(p.Topic) || !plainJSON(p.Error) {
		return dst, false
	}
	const in = "\n      "
	dst = append(dst, "{"+in+`"topic": `...)
	dst = appendQuoted(dst, p.Topic)
	dst = append(dst, ","+in+`"partition": `...)
	dst = strconv.AppendInt(dst, int64(p.Partition), 10)
	dst = append(dst, ","+in+`"leader": `...)
	dst = strconv.AppendInt(dst, int64(p.Leader), 10)
	dst = append(dst, ","+in+`"high_watermark": `...)
	dst = strconv.AppendInt(dst, p.HighWatermark, 10)
	dst = append(dst, ","+in+`"last_stable_offset": `...)
	dst = strconv.AppendInt(dst, p.LastStableOffset, 10)
	dst = append(dst, ","+in+`"producers": `...)
	if p.Producers == nil {
		dst = append(dst, "null"...)
	} else {
		const pin = "\n          " // a producer's fields
		dst = appendList(dst, len(p.Producers), in, func(dst []byte, i int) []byte {
			pr := &p.Producers[i]
			dst = append(dst, "\n        {"+pin+`"producer_id": `...)
			dst = strconv.AppendInt(dst, pr.ProducerID, 10)
			dst = append(dst, ","+pin+`"producer_epoch": `...)
			dst = strconv.AppendInt(dst, int64(pr.ProducerEpoch), 10)
			dst = append(dst, ","+pin+`"last_sequence": `...)
			dst = strconv.AppendInt(dst, int64(pr.LastSequence), 10)
			dst = append(dst, ","+pin+`"last_timestamp": `...)
			dst = strconv.AppendInt(dst, pr.LastTimestamp, 10)
			dst = append(dst, ","+pin+`"coordinator_epoch": `...)
			dst = strconv.AppendInt(dst, int64(pr.CoordinatorEpoch), 10)
			dst = append(dst, ","+pin+`"current_txn_start_offset": `...)
			dst = appendIntPtr(dst, pr.CurrentTxnStartOffset)
			return append(dst, "\n        }"...)
		})
	}
	if p.Error != "" {
		dst = append(dst, ","+in+`"error": `...)
		dst = appendQuoted(dst, p.Error)
	}
	return append(dst, "\n    }\n"...), true
}
