package model

import (
	"strings"
	"unsafe"
)

// ShareStrings makes next hold prev's copy of every id both have, and one
// copy of each state and error text: each refresh decodes every id and
// state afresh, and at 500,000 ids keeping those copies cost about 50 bytes
// per id per snapshot held. Only the strings change, never their text, and
// a field already sharing is not written (a reader of prev may be looking).
// Both are sorted by id; prev may be nil.
func ShareStrings(prev, next *Snapshot) {
	if next == nil {
		return
	}
	var errs map[string]string
	i := 0
	for j := range next.Txns {
		n := &next.Txns[j]
		if prev != nil {
			// Equality first: most ids are in both, and == is cheaper than <.
			for i < len(prev.Txns) && prev.Txns[i].ID != n.ID && prev.Txns[i].ID < n.ID {
				i++
			}
			if i < len(prev.Txns) {
				share(&n.ID, prev.Txns[i].ID)
			}
		}
		shareState(&n.State)
		if n.Err != "" {
			if errs == nil {
				errs = map[string]string{}
			}
			if e, ok := errs[n.Err]; ok {
				share(&n.Err, e)
			} else {
				errs[n.Err] = n.Err
			}
		}
	}
}

// share points *dst at src when they hold the same text.
func share(dst *string, src string) {
	if *dst == src && unsafe.StringData(*dst) != unsafe.StringData(src) {
		*dst = src
	}
}

var knownStates = [...]State{Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence}

func shareState(s *State) { share((*string)(s), string(StateOf(string(*s)))) }

// stateIndex is s's position in knownStates, or -1.
func stateIndex(s State) int {
	switch s {
	case Empty:
		return 0
	case Ongoing:
		return 1
	case PrepareCommit:
		return 2
	case PrepareAbort:
		return 3
	case CompleteCommit:
		return 4
	case CompleteAbort:
		return 5
	case Dead:
		return 6
	case PrepareEpochFence:
		return 7
	}
	return -1
}

// StateOf is text as a State, the package's own constant when it names a
// known state: a listing of 500,000 ids then holds no copy of "CompleteCommit"
// per id, and comparing two states is comparing two pointers.
func StateOf(text string) State {
	if k := stateIndex(State(text)); k >= 0 {
		return knownStates[k]
	}
	return State(strings.Clone(text)) // text may be a view into a response

}
