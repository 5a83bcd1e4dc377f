package kafkaadmin_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/txnscope/txnscope/internal/conn"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// kfake with SASL PLAIN and ACLs: "admin" may do anything and sets the scene
// (transactions, commits); the other users are what txnscope runs as.
const (
	aclAdmin = "admin"
	aclPass  = "pw"
)

func aclAllow(rt kmsg.ACLResourceType, name string, op kmsg.ACLOperation) kfake.ACL {
	pat := kmsg.ACLResourcePatternTypeLiteral
	if strings.HasSuffix(name, "-") { // "visible-": every name with that prefix
		pat = kmsg.ACLResourcePatternTypePrefixed
	}
	return kfake.ACL{Resource: rt, Name: name, Pattern: pat, Operation: op, Allow: true}
}

const (
	onTxnID   = kmsg.ACLResourceTypeTransactionalId
	onTopic   = kmsg.ACLResourceTypeTopic
	onGroup   = kmsg.ACLResourceTypeGroup
	onCluster = kmsg.ACLResourceTypeCluster
)

// aclCluster starts kfake with ACLs and these users (kfake.User options).
func aclCluster(t *testing.T, users ...kfake.Opt) (*kfake.Cluster, []string) {
	t.Helper()
	opts := append([]kfake.Opt{kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser(conn.Plain, aclAdmin, aclPass)}, users...)
	return kafkatest.NewCluster(t, opts...)
}

func aclUser(name string, acls ...kfake.ACL) kfake.Opt {
	return kfake.User(conn.Plain, name, aclPass, acls...)
}

// adminOpts authenticate as the superuser.
func aclAdminOpts(boot []string) []kgo.Opt {
	return []kgo.Opt{kgo.SeedBrokers(boot...), kgo.SASL(plain.Auth{User: aclAdmin, Pass: aclPass}.AsMechanism()),
		kgo.AllowAutoTopicCreation(), kgo.RequestRetries(3)}
}

// openAs begins a transaction for id as the superuser and writes to each
// partition; it stays open (10-minute timeout).
func aclOpen(t *testing.T, boot []string, id string, parts ...model.TopicPartition) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append(aclAdminOpts(boot), kgo.TransactionalID(id), kgo.TransactionTimeout(10*time.Minute),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	kafkatest.Begin(t, cl)
	for _, p := range parts {
		kafkatest.Produce(t, cl, p.Topic, p.Partition, kafkatest.Records)
	}
	return cl
}

// adminOf is txnscope as the superuser: it sees everything.
func aclSuper(t *testing.T, boot []string) *kafkaadmin.Client {
	return aclAs(t, boot, aclAdmin)
}

func aclAs(t *testing.T, boot []string, name string, watch ...model.TopicPartition) *kafkaadmin.Client {
	t.Helper()
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second, Watch: watch,
		Security: conn.Security{SASL: &conn.SASL{Mechanism: conn.Plain, Username: name, Password: aclPass}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func aclTP(t string, p int32) model.TopicPartition {
	return model.TopicPartition{Topic: t, Partition: p}
}

// countProbes counts the ACL probes (DescribeTransactions of an id nobody
// uses) the cluster receives from now on.
func aclProbes(c *kfake.Cluster) *atomic.Int64 {
	var n atomic.Int64
	c.ControlKey(int16(kmsg.DescribeTransactions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, id := range req.(*kmsg.DescribeTransactionsRequest).TransactionalIDs {
			if strings.HasPrefix(id, "txnscope-acl-probe-") {
				n.Add(1)
			}
		}
		return nil, nil, false
	})
	return &n
}

// A user allowed to DESCRIBE only some transactional ids sees exactly those,
// and a note that others are hidden, with the pinned partitions held by
// producers it cannot see counted.
func TestACLHiddenIDs(t *testing.T) {
	t.Parallel()
	c, boot := aclCluster(t,
		aclUser("partial", aclAllow(onTxnID, "visible-", kmsg.ACLOperationDescribe), aclAllow(onTopic, "*", kmsg.ACLOperationRead)),
		aclUser("full", aclAllow(onTxnID, "*", kmsg.ACLOperationDescribe), aclAllow(onTopic, "*", kmsg.ACLOperationRead)))
	aclOpen(t, boot, "secret-0-1", aclTP("orders", 0)) // first: it pins orders-0
	aclOpen(t, boot, "visible-0-1", aclTP("orders", 0), aclTP("orders", 1))

	probes := aclProbes(c)
	partial := aclAs(t, boot, "partial")
	s := refresh(t, partial, nil)
	if len(s.Txns) != 1 || s.Txns[0].ID != "visible-0-1" {
		t.Fatalf("ids %v, want exactly visible-0-1", s.Txns)
	}
	const want = "some transactional ids are hidden by ACLs: you may DESCRIBE only some; 1 pinned partition is held by a producer you cannot see"
	if s.Hidden != want {
		t.Fatalf("Hidden = %q, want %q", s.Hidden, want)
	}
	o0 := partOf(t, s, "orders", 0)
	if !o0.OwnersHidden || !o0.Pinned() {
		t.Fatalf("orders-0 %+v: want pinned, owners maybe hidden", o0)
	}
	// Watching on: the probe is not asked again on every refresh.
	for range 4 {
		s = refresh(t, partial, s)
	}
	if n := probes.Load(); n != 1 {
		t.Fatalf("%d probes in 5 refreshes, want 1 (with the broker settings' cadence)", n)
	}
	if !strings.HasPrefix(s.Hidden, model.HiddenIDs) {
		t.Fatalf("Hidden lost on a later refresh: %q", s.Hidden)
	}

	full := refresh(t, aclAs(t, boot, "full"), nil)
	if full.Hidden != "" || len(full.Txns) != 2 {
		t.Fatalf("full view: Hidden %q, %d ids", full.Hidden, len(full.Txns))
	}
	if p := partOf(t, full, "orders", 0); p.OwnersHidden {
		t.Fatal("nothing hidden, yet orders-0 says owners may be hidden")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if note, err := partial.HiddenIDs(ctx); err != nil || !strings.HasPrefix(note, model.HiddenIDs) {
		t.Fatalf("HiddenIDs = %q, %v", note, err)
	}
	if note, err := aclSuper(t, boot).HiddenIDs(ctx); err != nil || note != "" {
		t.Fatalf("superuser HiddenIDs = %q, %v", note, err)
	}
}

// A topic the user may DESCRIBE but not READ shows its offsets and "no
// permission" for its producers; one it may not even DESCRIBE shows "no
// permission" for both; neither fails the refresh, and the transactions on
// them still show.
func TestACLTopicPermissions(t *testing.T) {
	t.Parallel()
	_, boot := aclCluster(t, aclUser("noread",
		aclAllow(onTxnID, "*", kmsg.ACLOperationDescribe),
		aclAllow(onTopic, "orders", kmsg.ACLOperationDescribe),
		aclAllow(onTopic, "other", kmsg.ACLOperationRead)))
	aclOpen(t, boot, "job-0-1", aclTP("orders", 0), aclTP("other", 0))
	aclOpen(t, boot, "ghostly-0-1", aclTP("ghost", 0))

	a := aclAs(t, boot, "noread", aclTP("ghost", 0))
	s := refresh(t, a, nil)
	for _, id := range []string{"job-0-1", "ghostly-0-1"} {
		if tx := txnOf(t, s, id); tx.State != model.Ongoing {
			t.Errorf("%s: %+v", id, tx)
		}
	}

	o := partOf(t, s, "orders", 0)
	const producersDenied = "no permission to read the producers: TOPIC_AUTHORIZATION_FAILED: Not authorized to access topics: [Topic authorization failed.]"
	switch {
	case !o.ProducersDenied || o.OffsetsDenied:
		t.Errorf("orders-0 denied offsets %v producers %v, want producers only", o.OffsetsDenied, o.ProducersDenied)
	case !strings.HasPrefix(o.Err, producersDenied):
		t.Errorf("orders-0 Err %q, want it to start with %q", o.Err, producersDenied)
	case o.Producers != nil:
		t.Errorf("orders-0 shows producers it may not read: %+v", o.Producers)
	case !o.Pinned() || o.Leader < 0:
		t.Errorf("orders-0 offsets (DESCRIBE is enough) not read: %+v", o)
	}

	if other := partOf(t, s, "other", 0); other.Err != "" || len(other.Producers) != 1 || !other.Pinned() {
		t.Errorf("other-0 (READ allowed): %+v", other)
	}

	g := partOf(t, s, "ghost", 0)
	const bothDenied = "no permission: TOPIC_AUTHORIZATION_FAILED: Not authorized to access topics: [Topic authorization failed.]"
	switch {
	case !g.OffsetsDenied || !g.ProducersDenied:
		t.Errorf("ghost-0 denied offsets %v producers %v, want both", g.OffsetsDenied, g.ProducersDenied)
	case !strings.HasPrefix(g.Err, bothDenied):
		t.Errorf("ghost-0 Err %q, want it to start with %q", g.Err, bothDenied)
	case strings.Contains(g.Err, "not reported"):
		t.Errorf("ghost-0 Err repeats the refusal as a metadata problem: %q", g.Err)
	case g.HighWatermark != -1 || g.LastStableOffset != -1 || g.Producers != nil:
		t.Errorf("ghost-0 shows what it may not read: %+v", g)
	}
	// orders and other (3 partitions each) plus the watched ghost-0, which
	// alone could not be read.
	if s.Scanned != 7 || s.Unread != 1 {
		t.Errorf("scanned %d, unread %d; want 7 and 1", s.Scanned, s.Unread)
	}
	// No permission is no pinner: never judged hanging on a guess.
	for _, p := range model.Pins(s, nil, s.TakenAt.Add(time.Hour)) {
		if p.Hanging || p.MaybeHanging {
			t.Errorf("%s-%d judged hanging without its producers: %+v", p.Topic, p.TopicPartition.Partition, p.Why)
		}
	}
}

// Groups the user may not DESCRIBE are left out by ListGroups: the probe
// says so; a group whose offsets are refused says "no permission" too.
func TestACLGroups(t *testing.T) {
	t.Parallel()
	c, boot := aclCluster(t, aclUser("grp",
		aclAllow(onTxnID, "*", kmsg.ACLOperationDescribe),
		aclAllow(onTopic, "*", kmsg.ACLOperationRead),
		aclAllow(onGroup, "g-visible", kmsg.ACLOperationDescribe)))
	aclOpen(t, boot, "job-0-1", aclTP("orders", 0))
	superuser := refresh(t, aclSuper(t, boot), nil)
	lso := partOf(t, superuser, "orders", 0).LastStableOffset

	cl, err := kgo.NewClient(aclAdminOpts(boot)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, g := range []string{"g-visible", "g-secret"} {
		var offs kadm.Offsets
		offs.AddOffset("orders", 0, lso, -1)
		if _, err := kadm.NewClient(cl).CommitOffsets(ctx, g, offs); err != nil {
			t.Fatalf("commit for %s: %v", g, err)
		}
	}

	a := aclAs(t, boot, "grp")
	s := refresh(t, a, nil)
	if len(s.GroupCommits) != 1 || s.GroupCommits[0].Group != "g-visible" {
		t.Fatalf("group commits %+v, want g-visible's only", s.GroupCommits)
	}
	const hiddenGroups = "no permission to DESCRIBE every consumer group"
	if !strings.HasPrefix(s.GroupsErr, hiddenGroups) {
		t.Fatalf("GroupsErr %q, want it to start with %q", s.GroupsErr, hiddenGroups)
	}

	// A group listed but whose offsets are refused (a real broker lists
	// every group to a principal with DESCRIBE on the cluster, kfake does not).
	c.ControlKey(int16(kmsg.OffsetFetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.OffsetFetchRequest)
		resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
		resp.Version = req.Version
		for _, g := range req.Groups {
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp, nil, true
	})
	s = refresh(t, a, s)
	const offsetsDenied = "no permission to read the offsets of 1 group: GROUP_AUTHORIZATION_FAILED: Not authorized to access group: Group authorization failed."
	if len(s.GroupCommits) != 0 || !strings.Contains(s.GroupsErr, offsetsDenied) || !model.Denied(s.GroupsErr) {
		t.Fatalf("GroupsErr %q (commits %+v), want %q in it", s.GroupsErr, s.GroupCommits, offsetsDenied)
	}
}

// The actions: refused by the broker with its reason when the ACL is
// missing, refused before sending when the re-check itself is refused or
// when the owner may be an id we cannot see.
func TestACLActions(t *testing.T) {
	t.Parallel()
	c, boot := aclCluster(t,
		// sees every id and topic, may act on nothing
		aclUser("viewer", aclAllow(onTxnID, "*", kmsg.ACLOperationDescribe), aclAllow(onTopic, "*", kmsg.ACLOperationRead)),
		// may write markers, but sees only some ids
		aclUser("partial", aclAllow(onTxnID, "visible-", kmsg.ACLOperationDescribe), aclAllow(onTopic, "*", kmsg.ACLOperationRead),
			aclAllow(onCluster, "kafka-cluster", kmsg.ACLOperationClusterAction)),
		// may DESCRIBE the topic (offsets) but not READ it (producers)
		aclUser("noread", aclAllow(onTxnID, "*", kmsg.ACLOperationDescribe), aclAllow(onTopic, "*", kmsg.ACLOperationDescribe),
			aclAllow(onCluster, "kafka-cluster", kmsg.ACLOperationClusterAction)),
		// may do both actions
		aclUser("operator", aclAllow(onTxnID, "*", kmsg.ACLOperationWrite), aclAllow(onTopic, "*", kmsg.ACLOperationRead),
			aclAllow(onCluster, "kafka-cluster", kmsg.ACLOperationClusterAction)))
	aclOpen(t, boot, "stuck-0-5", aclTP("orders", 0), aclTP("orders", 1))
	aclOpen(t, boot, "secret-0-5", aclTP("orders", 2))
	markers := countRequests(c, kmsg.WriteTxnMarkers)
	inits := countRequests(c, kmsg.InitProducerID)

	// The coordinator forgets orders-0: a hanging transaction there.
	forget := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeTransactions}, Topic: "orders", Partitions: []int32{0}, Count: -1})
	defer forget.Remove()

	viewer := aclAs(t, boot, "viewer")
	s := refresh(t, viewer, nil)
	if s.Hidden != "" {
		t.Fatalf("viewer sees every id, yet Hidden = %q", s.Hidden)
	}
	o0 := partOf(t, s, "orders", 0)
	orphans := model.Orphans(o0, model.ByProducerID(s))
	if len(orphans) != 1 {
		t.Fatalf("orders-0 orphans %+v", orphans)
	}
	abort := abortOn(o0, orphans[0])
	stuck := txnOf(t, s, "stuck-0-5")

	t.Run("WriteTxnMarkers without CLUSTER_ACTION", func(t *testing.T) {
		r := execute(t, viewer, abort)
		if !r.Sent || r.Refused || r.Unknown || r.ErrorCode != "CLUSTER_AUTHORIZATION_FAILED" || r.Err != "Cluster authorization failed." {
			t.Fatalf("%+v", r)
		}
		if want := "refused by the broker: CLUSTER_AUTHORIZATION_FAILED: Cluster authorization failed."; !strings.HasPrefix(r.Summary(), want) {
			t.Fatalf("summary %q, want it to start with %q", r.Summary(), want)
		}
		if markers.Load() != 1 {
			t.Fatalf("%d WriteTxnMarkers, want the one refused", markers.Load())
		}
	})
	t.Run("InitProducerId without WRITE", func(t *testing.T) {
		r := execute(t, viewer, forceTerminate(stuck))
		if !r.Sent || r.Refused || r.Unknown || r.ErrorCode != "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" {
			t.Fatalf("%+v", r)
		}
		if want := "refused by the broker: TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "; !strings.HasPrefix(r.Summary(), want) {
			t.Fatalf("summary %q", r.Summary())
		}
		if inits.Load() != 1 {
			t.Fatalf("%d InitProducerId, want the one refused (never retried)", inits.Load())
		}
	})
	t.Run("the owner may be hidden", func(t *testing.T) {
		partial := aclAs(t, boot, "partial")
		ps := refresh(t, partial, nil)
		p2 := partOf(t, ps, "orders", 2) // secret-0-5's: no visible owner
		if !p2.OwnersHidden {
			t.Fatalf("orders-2 %+v: want owners maybe hidden", p2)
		}
		pr, _ := p2.Pinner()
		before := markers.Load()
		r := execute(t, partial, abortOn(p2, pr))
		if !r.Refused || r.Sent || !strings.HasPrefix(r.Err, "refused: some transactional ids are hidden by ACLs") {
			t.Fatalf("%+v", r)
		}
		if markers.Load() != before {
			t.Fatal("markers written for a transaction whose owner may be live")
		}
		// find-hanging says "possibly" and reports nothing as hanging.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		time.Sleep(2 * time.Millisecond)
		rep, err := partial.FindHanging(ctx, kafkaadmin.HangingScope{Topic: "orders", Partition: 2, Broker: -1})
		if err != nil || len(rep.Hanging) != 0 || len(rep.Possibly) != 1 || rep.Possibly[0].Reason != model.OwnerMaybeHidden ||
			!strings.HasPrefix(rep.Hidden, model.HiddenIDs) {
			t.Fatalf("find-hanging as partial: %+v, %v", rep, err)
		}
		// The superuser sees secret-0-5 holding orders-2: not hanging at all.
		rep, err = aclSuper(t, boot).FindHanging(ctx, kafkaadmin.HangingScope{Topic: "orders", Partition: 2, Broker: -1})
		if err != nil || len(rep.Hanging) != 0 || len(rep.Possibly) != 0 || rep.Hidden != "" {
			t.Fatalf("find-hanging as admin: %+v, %v", rep, err)
		}
	})
	t.Run("the re-check is refused", func(t *testing.T) {
		noread := aclAs(t, boot, "noread")
		before := markers.Load()
		r := execute(t, noread, abort)
		const want = "refused: no permission to re-read the producers of orders-0: TOPIC_AUTHORIZATION_FAILED: "
		if !r.Refused || r.Sent || !strings.HasPrefix(r.Err, want) || markers.Load() != before {
			t.Fatalf("%+v, want %q", r, want)
		}
		partial := aclAs(t, boot, "partial")
		r = execute(t, partial, forceTerminate(stuck))
		const wantID = "refused: no permission to re-read stuck-0-5: TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "
		if !r.Refused || r.Sent || !strings.HasPrefix(r.Err, wantID) {
			t.Fatalf("%+v, want %q", r, wantID)
		}
	})
	t.Run("allowed", func(t *testing.T) {
		op := aclAs(t, boot, "operator")
		if r := execute(t, op, abort); !r.OK() {
			t.Fatalf("abort with CLUSTER_ACTION: %+v (%s)", r, r.Summary())
		}
		if r := execute(t, op, forceTerminate(stuck)); !r.OK() {
			t.Fatalf("force-terminate with WRITE: %+v (%s)", r, r.Summary())
		}
	})
}

// A principal whose ACLs let the hidden-ids probe through but refuse the
// coordinators' load probes (DESCRIBE on some prefixes only) cannot tell a
// producer whose id it may not see from one no coordinator owns: the
// partition abort of such a live transaction is refused, nothing written.
func TestACLLoadProbesRefusedAbortRefused(t *testing.T) {
	t.Parallel()
	c, boot := aclCluster(t, aclUser("odd",
		aclAllow(onTxnID, "visible-", kmsg.ACLOperationDescribe), aclAllow(onTxnID, "txnscope-acl-probe-", kmsg.ACLOperationDescribe),
		aclAllow(onTopic, "*", kmsg.ACLOperationRead), aclAllow(onTopic, "*", kmsg.ACLOperationDescribe),
		aclAllow(onCluster, "kafka-cluster", kmsg.ACLOperationClusterAction)))
	aclOpen(t, boot, "secret-0-1", aclTP("orders", 0))
	markers := countRequests(c, kmsg.WriteTxnMarkers)
	odd := aclAs(t, boot, "odd")
	s := refresh(t, odd, nil)
	p0 := partOf(t, s, "orders", 0)
	pr, ok := p0.Pinner()
	if !ok {
		t.Fatalf("orders-0 %+v: want pinned", p0)
	}
	if !p0.OwnersHidden || !strings.HasPrefix(s.Hidden, model.HiddenIDs) {
		t.Fatalf("the refresh: note %q, orders-0 owners hidden %v; want both to say ids are hidden", s.Hidden, p0.OwnersHidden)
	}
	r := execute(t, odd, abortOn(p0, pr))
	if !r.Refused || r.Sent || markers.Load() != 0 {
		t.Fatalf("abort of a live transaction whose id ACLs hide: %+v, %d markers; want refused, none", r, markers.Load())
	}
	t.Log(r.Err)
}
