package model

import (
	"strings"
	"sync"
	"sync/atomic"
)

// State is a transaction state. It is a number, not its name: a row holds
// one per id, and at 2,000,000 ids the name's string header alone was 32
// MB of every generation of rows. String gives the name, Kafka's own; a
// state this version does not know (a newer broker's) gets a number of its
// own from StateOf, the first time it is seen.
type State uint8

var knownStates = [...]State{Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence}

// namesSeen are the names, by number: the known ones first, then those
// StateOf met, in the order it met them. Written under statesMu, a new
// slice each time, so that String reads it without a lock.
var (
	statesMu  sync.Mutex
	namesSeen atomic.Pointer[[]string]
)

func init() {
	names := []string{"", "Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}
	namesSeen.Store(&names)
}

// NoState is the zero State: no state known (yet), named "".
const NoState State = 0

// OtherState is the number every unknown state gets once the numbers run
// out (a broker, or a file, that names hundreds of states): its name says so.
const OtherState State = 255

const otherStateName = "(one of too many unknown states)"

// String is the state's name, as Kafka spells it.
func (s State) String() string {
	if s == OtherState {
		return otherStateName
	}
	if names := *namesSeen.Load(); int(s) < len(names) {
		return names[s]
	}
	return ""
}

// StateOf is the State named text: a known state's constant, or the number
// an unknown name was given (given now when it is new).
func StateOf(text string) State {
	if k := stateIndex(text); k >= 0 {
		return knownStates[k]
	}
	if text == "" {
		return 0
	}
	names := *namesSeen.Load()
	for i := len(knownStates) + 1; i < len(names); i++ {
		if names[i] == text {
			return State(i)
		}
	}
	statesMu.Lock()
	defer statesMu.Unlock()
	names = *namesSeen.Load()
	for i := len(knownStates) + 1; i < len(names); i++ {
		if names[i] == text {
			return State(i)
		}
	}
	if len(names) >= int(OtherState) {
		return OtherState
	}
	grown := append(names[:len(names):len(names)], strings.Clone(text)) // text may be a view into a response
	namesSeen.Store(&grown)
	return State(len(grown) - 1)
}

// stateIndex is the position in knownStates of the state named text, or -1.
func stateIndex(text string) int {
	switch text {
	case "Empty":
		return 0
	case "Ongoing":
		return 1
	case "PrepareCommit":
		return 2
	case "PrepareAbort":
		return 3
	case "CompleteCommit":
		return 4
	case "CompleteAbort":
		return 5
	case "Dead":
		return 6
	case "PrepareEpochFence":
		return 7
	}
	return -1
}

// MarshalText writes the name: JSON, and the flags, spell states as Kafka does.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a name (StateOf).
func (s *State) UnmarshalText(b []byte) error {
	*s = StateOf(string(b))
	return nil
}
