package views

import (
	"strconv"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
)

// Every string the cluster hands txnscope (transactional ids, topics, group
// ids, states, error texts) is data whoever runs a producer chooses. It
// becomes screen text only through these, or oneLine for errors, which write
// out whatever a terminal could act on; model keeps the raw strings, since
// lookups and requests need them.

// name is an id, topic or group as screen text.
func name(s string) string { return escape.Text(s) }

// stateName is a transaction state: the broker's word, which need not be one
// this version knows.
func stateName(s model.State) string { return escape.Text(s.String()) }

// partName is topic-partition as screen text.
func partName(topic string, p int32) string { return escape.Text(topic) + "-" + strconv.Itoa(int(p)) }
