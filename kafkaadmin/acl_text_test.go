package kafkaadmin

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/txnscope/txnscope/model"
)

func TestAuthErr(t *testing.T) {
	for err, want := range map[error]bool{
		kerr.TopicAuthorizationFailed:                               true,
		kerr.GroupAuthorizationFailed:                               true,
		kerr.ClusterAuthorizationFailed:                             true,
		kerr.TransactionalIDAuthorizationFailed:                     true,
		errors.Join(errors.New("x"), kerr.TopicAuthorizationFailed): true,
		kerr.SaslAuthenticationFailed:                               false, // authentication: the session ends, not one resource
		kerr.NotLeaderForPartition:                                  false,
		errors.New("dial tcp: refused"):                             false,
	} {
		if got := authErr(err); got != want {
			t.Errorf("authErr(%v) = %v", err, got)
		}
	}
}

// A partition's Err puts the refusal first, so it starts with
// model.NoPermission, says which reads were refused and which ACL each needs,
// and keeps the other problems after it.
func TestPartitionDenialText(t *testing.T) {
	p := tp{Topic: "orders", Partition: 3}
	const why = "TOPIC_AUTHORIZATION_FAILED: Not authorized to access topics: [Topic authorization failed.]"
	cases := []struct {
		name               string
		record             func(e *partErrs)
		err                string
		offsets, producers bool
	}{
		{"producers only", func(e *partErrs) { e.record(p, false, "producers", kerr.TopicAuthorizationFailed) },
			"no permission to read the producers: " + why + " (DescribeProducers needs READ on the topic)", false, true},
		{"offsets only", func(e *partErrs) { e.record(p, true, "high watermark", kerr.TopicAuthorizationFailed) },
			"no permission to read the offsets: " + why + " (ListOffsets needs DESCRIBE on the topic)", true, false},
		{"both, and the metadata gap is not repeated", func(e *partErrs) {
			e.add(p, "metadata: topic not reported")
			e.record(p, true, "high watermark", kerr.TopicAuthorizationFailed)
			e.record(p, true, "last stable offset", kerr.TopicAuthorizationFailed)
			e.record(p, false, "producers", kerr.TopicAuthorizationFailed)
		}, "no permission: " + why + " (ListOffsets needs DESCRIBE on the topic, DescribeProducers needs READ on the topic)", true, true},
		{"a refusal and another problem", func(e *partErrs) {
			e.record(p, false, "producers", kerr.TopicAuthorizationFailed)
			e.record(p, true, "high watermark", kerr.NotLeaderForPartition)
		}, "no permission to read the producers: " + why + " (DescribeProducers needs READ on the topic); high watermark: NOT_LEADER_FOR_PARTITION: ", false, true},
		{"no refusal", func(e *partErrs) { e.record(p, true, "high watermark", kerr.NotLeaderForPartition) },
			"high watermark: NOT_LEADER_FOR_PARTITION: ", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var e partErrs
			c.record(&e)
			part := model.Partition{TopicPartition: p}
			e.fill(&part)
			if !strings.HasPrefix(part.Err, c.err) || part.OffsetsDenied != c.offsets || part.ProducersDenied != c.producers {
				t.Errorf("Err %q offsets %v producers %v\nwant %q… %v %v", part.Err, part.OffsetsDenied, part.ProducersDenied, c.err, c.offsets, c.producers)
			}
			if got := e.get(p); got != part.Err {
				t.Errorf("get = %q, fill = %q", got, part.Err)
			}
			if model.Denied(part.Err) != (c.offsets || c.producers) {
				t.Errorf("model.Denied(%q) disagrees", part.Err)
			}
		})
	}
}

func TestGroupFailuresText(t *testing.T) {
	f := groupFailures{}
	if f.text() != "" {
		t.Fatal("nothing failed, yet a text")
	}
	f.add(kerr.CoordinatorNotAvailable, 2)
	f.add(kerr.GroupAuthorizationFailed, 1)
	got := f.text()
	want := "no permission to read the offsets of 1 group: GROUP_AUTHORIZATION_FAILED: Not authorized to access group: Group authorization failed. " +
		"(OffsetFetch needs DESCRIBE on the group and the topic); consumer group offsets not read for 2 groups: COORDINATOR_NOT_AVAILABLE: "
	if !strings.HasPrefix(got, want) {
		t.Errorf("text = %q\nwant %q…", got, want)
	}
}

func TestHiddenNote(t *testing.T) {
	for held, want := range map[int]string{
		0: "some transactional ids are hidden by ACLs: you may DESCRIBE only some",
		1: "some transactional ids are hidden by ACLs: you may DESCRIBE only some; 1 pinned partition is held by a producer you cannot see",
		2: "some transactional ids are hidden by ACLs: you may DESCRIBE only some; 2 pinned partitions are held by producers you cannot see",
	} {
		if got := hiddenNote(held); got != want {
			t.Errorf("hiddenNote(%d) = %q", held, got)
		}
	}
}

// applyHidden marks every partition, counts the pins held by producers no
// visible id owns, and adds the groups note only while something is pinned
// and no listed group's offsets were refused.
func TestApplyHidden(t *testing.T) {
	pinned := func(topic string, pid int64) model.Partition {
		return model.Partition{TopicPartition: tp{Topic: topic}, HighWatermark: 10, LastStableOffset: 5,
			Producers: []model.Producer{{ProducerID: pid, CurrentTxnStartOffset: 5}}}
	}
	snap := func() *model.Snapshot {
		return &model.Snapshot{
			Txns:       []model.Txn{{ID: "visible-0-1", State: model.Ongoing, ProducerID: 1}},
			Partitions: []model.Partition{pinned("a", 1), pinned("b", 2), pinned("c", 3), {TopicPartition: tp{Topic: "d"}, HighWatermark: 4, LastStableOffset: 4}},
		}
	}
	s := snap()
	applyHidden(s, brokerSettings{idsHidden: true, groupsHidden: true})
	if want := hiddenNote(2); s.Hidden != want {
		t.Errorf("Hidden = %q, want %q", s.Hidden, want)
	}
	for _, p := range s.Partitions {
		if !p.OwnersHidden {
			t.Errorf("%s not marked", p.Topic)
		}
	}
	if s.GroupsErr != groupsHiddenNote {
		t.Errorf("GroupsErr = %q", s.GroupsErr)
	}

	s = snap()
	s.GroupsErr = "no permission to read the offsets of 1 group: GROUP_AUTHORIZATION_FAILED: x"
	applyHidden(s, brokerSettings{groupsHidden: true})
	if s.Hidden != "" || s.Partitions[0].OwnersHidden || strings.Contains(s.GroupsErr, groupsHiddenNote) {
		t.Errorf("ids visible, groups listed though refused: %+v", s)
	}

	s = snap()
	s.Partitions = s.Partitions[3:] // nothing pinned: no group can be stuck, none missing matters
	applyHidden(s, brokerSettings{groupsHidden: true})
	if s.GroupsErr != "" {
		t.Errorf("GroupsErr = %q with nothing pinned", s.GroupsErr)
	}
}
