package model

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

// TestStateNames: every state Kafka names reads back as its constant and
// writes as its name; an unknown name gets a number once, the same to
// every caller, and keeps its text.
func TestStateNames(t *testing.T) {
	for k, st := range knownStates {
		name := st.String()
		if stateIndex(name) != k || StateOf(string([]byte(name))) != st {
			t.Errorf("%s: index %d, StateOf %v; want %d and itself", name, stateIndex(name), StateOf(name), k)
		}
	}
	if NoState.String() != "" || StateOf("") != NoState {
		t.Errorf("the zero state is named %q, and \"\" reads as %d", NoState.String(), StateOf(""))
	}
	var wg sync.WaitGroup
	got := make([]State, 16)
	for i := range got {
		wg.Go(func() { got[i] = StateOf("Frozen\x1b[2J") })
	}
	wg.Wait()
	for _, st := range got {
		if st != got[0] || st.String() != "Frozen\x1b[2J" || st.Open() || st == OtherState {
			t.Fatalf("an unknown state read concurrently: %v, want one number named as sent", got)
		}
	}
	b, err := json.Marshal(map[string]State{"a": Ongoing, "b": got[0], "c": NoState})
	if err != nil || string(b) != `{"a":"Ongoing","b":"Frozen\u001b[2J","c":""}` {
		t.Errorf("JSON %s, %v", b, err)
	}
	var back map[string]State
	if err := json.Unmarshal(b, &back); err != nil || back["a"] != Ongoing || back["b"] != got[0] || back["c"] != NoState {
		t.Errorf("read back %v, %v", back, err)
	}
}

// TestStatesRunOut: a source naming hundreds of states cannot make two of
// them one, nor take a known state's number: past the numbers there are,
// they all read as OtherState, which says so.
func TestStatesRunOut(t *testing.T) {
	was := namesSeen.Load()
	defer namesSeen.Store(was) // the other tests' unknown states keep numbers of their own
	seen := map[State]string{}
	for i := range 300 {
		name := fmt.Sprintf("Made-up-%d", i)
		st := StateOf(name)
		if st <= PrepareEpochFence {
			t.Fatalf("%s got a known state's number %d", name, st)
		}
		if st == OtherState {
			continue
		}
		if was, ok := seen[st]; ok {
			t.Fatalf("%s and %s share number %d", was, name, st)
		}
		seen[st] = name
		if st.String() != name {
			t.Fatalf("%d is named %q, want %q", st, st.String(), name)
		}
	}
	if OtherState.String() == "" || StateOf("Made-up-299") != OtherState {
		t.Errorf("past the numbers: %d named %q", StateOf("Made-up-299"), OtherState.String())
	}
	if Ongoing.String() != "Ongoing" || StateOf("Ongoing") != Ongoing {
		t.Error("the known states moved")
	}
}
