package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/model"
)

// EnvDataDir is the main broker's data directory (its log.dirs), written by scripts/kafka-up.
const EnvDataDir = "TXNSCOPE_KAFKA_DATA_DIR"

// DataDir returns the main test broker's data directory from $TXNSCOPE_KAFKA_DATA_DIR. When it is
// not set the test is skipped, or fails when CI=true.
func DataDir(t testing.TB) string {
	t.Helper()
	return fromEnv(t, EnvDataDir, "scripts/kafka-up")
}

const txnStateTopic = "__transaction_state"

// DumpTxnLog runs Kafka's own decoder of the coordinators' log (kafka-dump-log.sh
// --transaction-log-decoder, through scripts/kafka-tools dump-log) over every segment of the given
// partitions of __transaction_state under dataDir, all of them when none is given, and returns its
// records partition by partition in offset order: the reference kafkaadmin.ReadTxnLog is held to.
// It reads the broker's files while the broker writes them; a record is there once it is written.
func DumpTxnLog(ctx context.Context, dataDir string, partitions ...int32) ([]model.TxnLogRecord, error) {
	dirs, err := filepath.Glob(filepath.Join(dataDir, txnStateTopic+"-*"))
	if err != nil {
		return nil, err
	}
	var files []string
	for _, dir := range dirs {
		p, err := partitionOf(dir)
		if err != nil || len(partitions) > 0 && !slices.Contains(partitions, p) {
			continue
		}
		logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
		if err != nil {
			return nil, err
		}
		slices.Sort(logs) // the base offset, zero-padded: the segments in order
		files = append(files, logs...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no segment of %s under %s", txnStateTopic, dataDir)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, kafkaTools(), "dump-log", "--transaction-log-decoder", "--print-data-log",
		"--files", strings.Join(files, ","))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kafka-tools dump-log: %v\n%s", err, stderr.Bytes())
	}
	return parseDumpLog(&stdout)
}

// kafkaTools is scripts/kafka-tools, found from this file's place in the module.
func kafkaTools() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(filepath.Dir(file)), "scripts", "kafka-tools")
}

// partitionOf reads the partition from a segment's directory, __transaction_state-N.
func partitionOf(dir string) (int32, error) {
	n, err := strconv.ParseInt(strings.TrimPrefix(filepath.Base(dir), txnStateTopic+"-"), 10, 32)
	return int32(n), err
}

// dumpValue is the JSON of one value in the dump; the tagged fields keep Kafka's defaults when
// the dump leaves them out.
type dumpValue struct {
	Version string `json:"version"`
	Data    struct {
		ProducerID         int64  `json:"producerId"`
		PreviousProducerID int64  `json:"previousProducerId"`
		NextProducerID     int64  `json:"nextProducerId"`
		ProducerEpoch      int16  `json:"producerEpoch"`
		NextProducerEpoch  int16  `json:"nextProducerEpoch"`
		TimeoutMs          int32  `json:"transactionTimeoutMs"`
		Status             string `json:"transactionStatus"`
		Partitions         []struct {
			Topic string  `json:"topic"`
			IDs   []int32 `json:"partitionIds"`
		} `json:"transactionPartitions"`
		LastUpdateMs     int64 `json:"transactionLastUpdateTimestampMs"`
		StartMs          int64 `json:"transactionStartTimestampMs"`
		ClientTxnVersion int16 `json:"clientTransactionVersion"`
	} `json:"data"`
}

// parseDumpLog reads DumpLogSegments' output: a "Dumping <file>" line per segment, then per record
// "| offset: N ... key: {json} payload: {json}" (payload <DELETE> for a tombstone). Keys of
// another record type are skipped, as decodeTxnLog skips them.
func parseDumpLog(r io.Reader) ([]model.TxnLogRecord, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	var out []model.TxnLogRecord
	partition := int32(-1)
	for sc.Scan() {
		line := sc.Text()
		if file, ok := strings.CutPrefix(line, "Dumping "); ok {
			p, err := partitionOf(filepath.Dir(file))
			if err != nil {
				return nil, fmt.Errorf("a segment outside %s: %s", txnStateTopic, file)
			}
			partition = p
			continue
		}
		if !strings.HasPrefix(line, "| offset: ") {
			continue
		}
		rec, ok, err := parseDumpRecord(line)
		if err != nil {
			return nil, fmt.Errorf("%w in: %s", err, line)
		}
		if ok {
			rec.Partition = partition
			out = append(out, rec)
		}
	}
	return out, sc.Err()
}

func parseDumpRecord(line string) (rec model.TxnLogRecord, ok bool, err error) {
	fields := strings.Fields(line) // "|", "offset:", N, ...
	if len(fields) < 3 {
		return rec, false, errors.New("no offset")
	}
	if rec.Offset, err = strconv.ParseInt(fields[2], 10, 64); err != nil {
		return rec, false, errors.New("no offset")
	}
	_, rest, found := strings.Cut(line, " key: ")
	if !found || !strings.HasPrefix(rest, "{") {
		return rec, false, nil // not a transaction's state ("Unknown record type ...")
	}
	// A transactional id may hold " payload: ": the key's JSON ends where its decoder stops.
	dec := json.NewDecoder(strings.NewReader(rest))
	var key struct {
		Type string `json:"type"`
		Data struct {
			ID string `json:"transactionalId"`
		} `json:"data"`
	}
	if err := dec.Decode(&key); err != nil {
		return rec, false, fmt.Errorf("key: %v", err)
	}
	if key.Type != "0" {
		return rec, false, nil
	}
	rec.ID = key.Data.ID
	payload, found := strings.CutPrefix(rest[dec.InputOffset():], " payload: ")
	switch {
	case !found:
		return rec, false, errors.New("no payload")
	case payload == "<DELETE>":
		rec.Tombstone = true
		return rec, true, nil
	}
	var v dumpValue
	v.Data.PreviousProducerID, v.Data.NextProducerID, v.Data.NextProducerEpoch = -1, -1, -1
	if err := json.Unmarshal([]byte(payload), &v); err != nil {
		return rec, false, fmt.Errorf("payload: %v", err)
	}
	d := v.Data
	rec.ProducerID, rec.ProducerEpoch, rec.TimeoutMs, rec.State = d.ProducerID, d.ProducerEpoch, d.TimeoutMs, model.StateOf(d.Status)
	rec.StartMs, rec.LastUpdateMs = d.StartMs, d.LastUpdateMs
	rec.PrevProducerID, rec.NextProducerID, rec.NextProducerEpoch = d.PreviousProducerID, d.NextProducerID, d.NextProducerEpoch
	rec.ClientTxnVersion = d.ClientTxnVersion
	for _, t := range d.Partitions {
		for _, p := range t.IDs {
			rec.Partitions = append(rec.Partitions, model.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	model.SortPartitions(rec.Partitions)
	return rec, true, nil
}
