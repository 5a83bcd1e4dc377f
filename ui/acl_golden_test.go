package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// The fixture as a principal with partial ACLs sees it: some transactional
// ids hidden (billing-2's producer has no visible owner, so it is only
// possibly hanging), a topic it may DESCRIBE but not READ (ledger: offsets,
// no producers), a watched topic it may not DESCRIBE (vault: nothing), and
// consumer groups it may not all DESCRIBE.
func aclSnapshot(at time.Time) *model.Snapshot {
	s := uitest.Snapshot(at)
	s.Hidden = model.HiddenIDs + ": you may DESCRIBE only some; 1 pinned partition is held by a producer you cannot see"
	s.GroupsErr = model.NoPermission + " to DESCRIBE every consumer group: groups hidden by ACLs are not shown"
	const topicDenied = "TOPIC_AUTHORIZATION_FAILED: Not authorized to access topics: [Topic authorization failed.]"
	s.Txns = append(s.Txns, model.Txn{ID: "ledger-writer-0-3", State: model.Ongoing, ProducerID: 9700, ProducerEpoch: 1,
		Coordinator: 2, TimeoutMs: 600000, StartUnixMs: uitest.T0.Add(-40 * time.Second).UnixMilli(), Described: true,
		Partitions: []model.TopicPartition{{Topic: "ledger", Partition: 0}}})
	s.Partitions = append(s.Partitions,
		model.Partition{TopicPartition: model.TopicPartition{Topic: "ledger", Partition: 0}, Leader: 1,
			HighWatermark: 500, LastStableOffset: 420, ProducersDenied: true,
			Err: "no permission to read the producers: " + topicDenied + " (DescribeProducers needs READ on the topic)"},
		model.Partition{TopicPartition: model.TopicPartition{Topic: "vault", Partition: 0}, Leader: -1,
			HighWatermark: -1, LastStableOffset: -1, OffsetsDenied: true, ProducersDenied: true,
			Err: "no permission: " + topicDenied + " (ListOffsets needs DESCRIBE on the topic, DescribeProducers needs READ on the topic)"})
	for i := range s.Partitions {
		s.Partitions[i].OwnersHidden = true
	}
	s.Sort()
	return s
}

// aclStarted has shown the ACL fixture twice, 90 s apart.
func aclStarted(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t)
	h.admin.Push(aclSnapshot(uitest.T0))
	h.run(h.m.Init())
	h.admin.Push(aclSnapshot(uitest.T0.Add(90 * time.Second)))
	h.now = uitest.T0.Add(88 * time.Second)
	h.tick()
	return h
}

var aclScreens = []struct {
	name  string
	setup func(t *testing.T) *harness
}{
	{"acl-list", aclStarted},
	{"acl-list-nothing-visible", func(t *testing.T) *harness {
		h := newHarness(t)
		s := aclSnapshot(uitest.T0)
		s.Hidden = model.HiddenIDs + ": you may DESCRIBE only some"
		s.Txns, s.Partitions, s.GroupCommits = nil, nil, nil
		h.admin.Push(s)
		h.run(h.m.Init())
		return h
	}},
	{"acl-partitions", func(t *testing.T) *harness {
		h := aclStarted(t)
		h.press("p")
		return h
	}},
	{"acl-partition-detail", func(t *testing.T) *harness {
		h := aclStarted(t)
		h.press("p")
		h.selectPin("billing", 2)
		h.press("enter")
		return h
	}},
	{"acl-partition-detail-no-read", func(t *testing.T) *harness {
		h := aclStarted(t)
		h.press("p")
		h.selectPin("ledger", 0)
		h.press("enter") // ledger-writer-0-3's detail, on ledger-0
		return h
	}},
	{"acl-detail-no-read", func(t *testing.T) *harness {
		h := aclStarted(t)
		h.selectID("ledger-writer-0-3")
		h.press("enter")
		return h
	}},
	{"acl-groups", func(t *testing.T) *harness {
		h := aclStarted(t)
		h.press("c")
		return h
	}},
	{"acl-abort-refused-by-broker", func(t *testing.T) *harness {
		h := aclStarted(t)
		h.admin.Result = func(a model.Action) model.Result {
			return model.Result{Action: a, At: uitest.T0, Sent: true, ErrorCode: "CLUSTER_AUTHORIZATION_FAILED", Err: "Cluster authorization failed."}
		}
		h.selectID("orders-enricher-v1-2-41")
		h.press("enter", "G", "x")
		h.typeText("abort")
		h.press("enter")
		return h
	}},
	{"acl-force-terminate-refused-by-broker", func(t *testing.T) *harness {
		h := aclStarted(t)
		h.admin.Result = func(a model.Action) model.Result {
			return model.Result{Action: a, At: uitest.T0, Sent: true, ErrorCode: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", Err: "Transactional ID authorization failed."}
		}
		h.selectID("crashed-job-0-7")
		h.press("a")
		h.typeText("abort")
		h.press("enter")
		return h
	}},
	{"acl-abort-owner-maybe-hidden", func(t *testing.T) *harness {
		h := aclStarted(t)
		h.admin.Result = func(a model.Action) model.Result {
			return model.Result{Action: a, At: uitest.T0, Refused: true,
				Err: "refused: " + model.HiddenIDs + ", so producer 9500's transaction may belong to one you cannot see and be live, not hanging; " +
					"aborting it needs a principal allowed to DESCRIBE every transactional id"}
		}
		h.press("p")
		h.selectPin("billing", 2)
		h.press("enter", "x")
		h.typeText("abort")
		h.press("enter")
		return h
	}},
}

func TestACLGolden(t *testing.T) {
	for _, sc := range aclScreens {
		for _, size := range [][2]int{{80, 24}, {160, 48}} {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				h := sc.setup(t)
				fixedAuditPath(h)
				golden.RequireEqual(t, darkFrame(t, h, size[0], size[1]))
			})
		}
	}
}

// What the user must read on each screen, whatever the size.
func TestACLScreensSay(t *testing.T) {
	want := map[string][]string{
		"acl-list-nothing-visible":              {"some transactional ids are hidden by ACLs"},
		"acl-partitions":                        {"H? billing-2", "possibly hanging", "no permission: producers", "no visible id (ACLs?)"},
		"acl-partition-detail":                  {"POSSIBLY HANGING", "possibly hanging: owner may be hidden by ACLs", "refused while its owner may be hidden by ACLs"},
		"acl-partition-detail-no-read":          {"ledger-0", "no perm", "no permission to read the producers"},
		"acl-detail-no-read":                    {"ledger-0", "no perm", "no permission to read the producers: TOPIC_AUTHORIZATION_FAILED"},
		"acl-groups":                            {"no permission to DESCRIBE every consumer group"},
		"acl-abort-refused-by-broker":           {"refused by the broker: CLUSTER_AUTHORIZATION_FAILED: Cluster authorization failed."},
		"acl-force-terminate-refused-by-broker": {"refused by the broker: TRANSACTIONAL_ID_AUTHORIZATION_FAILED"},
		"acl-abort-owner-maybe-hidden":          {"refused: some transactional ids are hidden by ACLs"},
	}
	for _, sc := range aclScreens {
		t.Run(sc.name, func(t *testing.T) {
			h := sc.setup(t)
			h.send(tea.WindowSizeMsg{Width: 200, Height: 60})
			screen := h.screen()
			flat := strings.Join(strings.Fields(screen), " ")
			for _, s := range want[sc.name] {
				if !strings.Contains(flat, s) {
					t.Errorf("screen lacks %q:\n%s", s, screen)
				}
			}
			if strings.Contains(screen, "HANGING (no listed txn)") {
				t.Errorf("a producer whose owner may be hidden is called HANGING:\n%s", screen)
			}
		})
	}
}

// Every ACL screen is exactly W×H at any size.
func TestACLFramesFit(t *testing.T) {
	for _, sc := range aclScreens {
		t.Run(sc.name, func(t *testing.T) {
			h := sc.setup(t)
			h.send(tea.ColorProfileMsg{Profile: colorprofile.TrueColor})
			for w := 20; w <= 200; w += 9 {
				for ht := 5; ht <= 60; ht += 7 {
					h.send(tea.WindowSizeMsg{Width: w, Height: ht})
					lines := strings.Split(h.m.View().Content, "\n")
					if len(lines) != ht {
						t.Fatalf("%d×%d: %d lines", w, ht, len(lines))
					}
					for i, l := range lines {
						if got := ansi.StringWidth(l); got != w {
							t.Fatalf("%d×%d: line %d is %d cells: %q", w, ht, i, got, ansi.Strip(l))
						}
					}
				}
			}
		})
	}
}
