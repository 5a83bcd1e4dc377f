package model

import (
	"strconv"
	"strings"
)

// FlinkID is a transactional.id split the way Flink's KafkaSink builds it:
// <prefix>-<subtask>-<checkpoint>.
type FlinkID struct {
	Prefix     string
	Subtask    int
	Checkpoint int64
}

// ParseFlinkID splits id; ok is false when it does not look like a KafkaSink id.
func ParseFlinkID(id string) (FlinkID, bool) {
	last := strings.LastIndexByte(id, '-')
	if last <= 0 {
		return FlinkID{}, false
	}
	if !digits(id[last+1:]) {
		return FlinkID{}, false
	}
	cp, err := strconv.ParseInt(id[last+1:], 10, 64)
	if err != nil {
		return FlinkID{}, false
	}
	rest := id[:last]
	mid := strings.LastIndexByte(rest, '-')
	if mid <= 0 {
		return FlinkID{}, false
	}
	if !digits(rest[mid+1:]) {
		return FlinkID{}, false
	}
	sub, err := strconv.Atoi(rest[mid+1:])
	if err != nil {
		return FlinkID{}, false
	}
	return FlinkID{Prefix: rest[:mid], Subtask: sub, Checkpoint: cp}, true
}

// digits rejects what strconv would accept but Flink never writes: signs ("+3")
// and empty numbers.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
