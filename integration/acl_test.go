package integration

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/txnscope/txnscope/internal/conn"
	"github.com/txnscope/txnscope/internal/exporter"
	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// The principals of TestACLs, all SCRAM-SHA-512 users created when the storage is formatted.
const (
	aclAdmin    = "admin"    // a super user
	aclScoped   = "scoped"   // DESCRIBE on one prefix of transactional ids; READ on every topic
	aclNoRead   = "noread"   // DESCRIBE on every id; nothing on one topic, DESCRIBE only on another
	aclOperator = "operator" // DESCRIBE on every id, READ on every topic, nothing on the cluster, no WRITE
)

func aclPassword(user string) string { return user + "-Acl-s3cret-5b1" }

// aclBroker has the StandardAuthorizer, the four users, and no partition verification
// (KIP-890 part 1 off), so that a genuinely hanging transaction can be made for the partition
// abort.
func aclBroker(t *testing.T) *Broker {
	t.Helper()
	var users []ScramUser
	for _, u := range []string{aclAdmin, aclScoped, aclNoRead, aclOperator} {
		users = append(users, ScramUser{Mechanism: "SCRAM-SHA-512", Name: u, Password: aclPassword(u)})
	}
	return StartBroker(t, BrokerOptions{
		Secure:     true,
		Authorizer: true,
		SuperUsers: []string{"User:" + aclAdmin},
		ScramUsers: users,
		Props:      []string{"transaction.partition.verification.enable=false"},
	})
}

// secureScope is txnscope's Kafka layer logged in as user over SASL_SSL, as `txnscope
// --tls --tls-ca CA --sasl-mechanism SCRAM-SHA-512 --sasl-username user` builds it.
func secureScope(t *testing.T, b *Broker, user string, watch ...model.TopicPartition) *scope {
	t.Helper()
	requireLoopback(t, b.SecureBootstrap)
	cfg := secureConfig(b, user)
	cfg.Watch = watch
	c, err := kafkaadmin.New(cfg)
	if err != nil {
		t.Fatalf("kafkaadmin.New as %s: %v", user, err)
	}
	t.Cleanup(c.Close)
	return &scope{t: t, c: c, hist: model.NewHistory(1000)}
}

// secureConfig is txnscope's client config for user over SASL_SSL.
func secureConfig(b *Broker, user string) kafkaadmin.Config {
	return kafkaadmin.Config{
		Bootstrap: []string{b.SecureBootstrap},
		Timeout:   10 * time.Second,
		Security: conn.Security{
			TLS:  &conn.TLS{CAFile: b.Certs.CAFile},
			SASL: &conn.SASL{Mechanism: conn.ScramSHA512, Username: user, Password: conn.Secret(aclPassword(user))},
		},
	}
}

// adminOver is a kadm client of the super user over SASL_SSL.
func adminOver(t *testing.T, b *Broker) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.SecureBootstrap),
		kgo.DialTLSConfig(&tls.Config{RootCAs: b.Certs.ClientCA, MinVersion: tls.VersionTLS12}),
		kgo.SASL(scram.Auth{User: aclAdmin, Pass: aclPassword(aclAdmin)}.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// allow creates ACLs and fails the test on any error.
func allow(ctx context.Context, t *testing.T, adm *kadm.Client, acls ...*kadm.ACLBuilder) {
	t.Helper()
	for _, a := range acls {
		res, err := adm.CreateACLs(ctx, a)
		if err != nil {
			t.Fatalf("CreateACLs: %v", err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("CreateACLs %s %s %s %s: %v %s", r.Principal, r.Operation, r.Type, r.Name, r.Err, r.ErrMessage)
			}
		}
	}
}

// TestACLs drives txnscope's Kafka layer as four principals on a broker with the standard
// authorizer and real transactional producers: each sees exactly what its ACLs allow, says why
// the rest is missing, and an abort the broker refuses comes back with the broker's error code.
func TestACLs(t *testing.T) {
	t.Parallel()
	// Its parallel subtests queue behind the package's other parallel tests
	// while this clock runs (see TestSecureConnections); go test's -timeout
	// bounds the run.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	b := aclBroker(t)
	bin := buildTxnscope(ctx, t)
	adm := adminOver(t, b)
	user := func(u string) string { return "User:" + u }
	// The producers write over PLAINTEXT, whose anonymous principal is a super user here.
	setup := newAdmin(t, b.Bootstrap)

	allow(ctx, t, adm,
		kadm.NewACLs().Allow(user(aclScoped), user(aclOperator)).Topics("*").Operations(kadm.OpRead, kadm.OpDescribe),
		kadm.NewACLs().Allow(user(aclNoRead), user(aclOperator)).TransactionalIDs("*").Operations(kadm.OpDescribe),
	)

	t.Run("acl", func(t *testing.T) {
		t.Run("describe-on-a-prefix-sees-only-those-ids", func(t *testing.T) {
			t.Parallel()
			aclPrefixScope(ctx, t, bin, b, adm, setup)
		})
		t.Run("no-read-on-a-topic", func(t *testing.T) {
			t.Parallel()
			aclNoReadTopic(ctx, t, b, adm, setup)
		})
		t.Run("partition-abort-without-cluster-action", func(t *testing.T) {
			t.Parallel()
			aclPartitionAbort(ctx, t, b, setup)
		})
		t.Run("force-terminate-without-write", func(t *testing.T) {
			t.Parallel()
			aclForceTerminate(ctx, t, bin, b, setup)
		})
		t.Run("the-log-needs-read-on-the-internal-topic", func(t *testing.T) {
			t.Parallel()
			aclLogNeedsRead(ctx, t, b, setup)
		})
		t.Run("no-describe-configs-no-group-describe", func(t *testing.T) {
			t.Parallel()
			aclClusterAndGroupsDenied(ctx, t, bin, b, setup)
		})
	})
}

// (a) DESCRIBE on a prefixed pattern of transactional ids: exactly those ids, and the note
// that others are hidden; the super user sees every id and no note.
func aclPrefixScope(ctx context.Context, t *testing.T, bin string, b *Broker, adm *kadm.Client, setup *kadm.Client) {
	topic := topicWith(ctx, t, setup, 3)
	prefix := name(t, "visible") + "-"
	visible := []string{prefix + "0", prefix + "1"}
	hidden := name(t, "hidden") + "-0"
	allow(ctx, t, adm, kadm.NewACLs().Allow("User:"+aclScoped).TransactionalIDs(prefix).
		ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpDescribe))
	for i, id := range append(slices.Clone(visible), hidden) {
		p := producer(t, b.Bootstrap, id, 10*time.Minute)
		openTxn(ctx, t, p, model.TopicPartition{Topic: topic, Partition: int32(i)}, 1, id)
	}
	hiddenTP := model.TopicPartition{Topic: topic, Partition: 2}

	scoped := secureScope(t, b, aclScoped)
	snap := scoped.until(ctx, "the visible ids Ongoing", func(s *model.Snapshot) bool {
		for _, id := range visible {
			if tx, ok := s.Txn(id); !ok || tx.State != model.Ongoing {
				return false
			}
		}
		return true
	})
	var ids []string
	for _, tx := range snap.Txns {
		ids = append(ids, tx.ID)
	}
	if !slices.Equal(ids, visible) {
		t.Errorf("%s sees ids %q, want exactly %q", aclScoped, ids, visible)
	}
	if !strings.HasPrefix(snap.Hidden, model.HiddenIDs) {
		t.Errorf("%s: Snapshot.Hidden = %q, want it to start with %q", aclScoped, snap.Hidden, model.HiddenIDs)
	}
	// The exporter says so too: its series know nothing of the hidden ids.
	if u := exporter.Compute(snap, nil, nil, time.Now()).Unknown; !u["transactional_ids"] {
		t.Errorf("%s: the exporter's unknowns %v, want transactional_ids", aclScoped, u)
	}
	// The hidden id's transaction pins its partition: a producer no visible transaction owns,
	// which must not be taken for a hanging transaction.
	if p, ok := snap.Partition(hiddenTP); ok {
		if !p.OwnersHidden {
			t.Errorf("%s-%d is pinned by a hidden id's producer but OwnersHidden is false: %+v", hiddenTP.Topic, hiddenTP.Partition, p)
		}
	}

	super := secureScope(t, b, aclAdmin)
	all := super.until(ctx, "every id Ongoing for the super user", func(s *model.Snapshot) bool {
		for _, id := range append(slices.Clone(visible), hidden) {
			if tx, ok := s.Txn(id); !ok || tx.State != model.Ongoing {
				return false
			}
		}
		return true
	})
	if all.Hidden != "" {
		t.Errorf("super user: Snapshot.Hidden = %q, want empty", all.Hidden)
	}
	if p, ok := all.Partition(hiddenTP); ok && p.OwnersHidden {
		t.Errorf("super user: %s-%d has OwnersHidden", hiddenTP.Topic, hiddenTP.Partition)
	}

	// The same through the real binary's snapshot -o json.
	js := aclSnapshotJSON(ctx, t, bin, b, aclScoped)
	var jsIDs []string
	for _, tx := range js.Transactions {
		jsIDs = append(jsIDs, tx.TransactionalID)
	}
	if !slices.Equal(jsIDs, visible) || !strings.HasPrefix(js.Hidden, model.HiddenIDs) {
		t.Errorf("%s's snapshot -o json: ids %q hidden %q; want exactly %q and a note starting %q", aclScoped, jsIDs, js.Hidden, visible, model.HiddenIDs)
	}
	if js := aclSnapshotJSON(ctx, t, bin, b, aclAdmin); js.Hidden != "" || findTxnJSON(js, hidden) == nil {
		t.Errorf("super user's snapshot -o json: hidden %q, %s present %v; want no note and the id", js.Hidden, hidden, findTxnJSON(js, hidden) != nil)
	}

	// The one-shot list prints what the principal may see and says on stderr that ids are hidden.
	l := runTxnscope(ctx, t, bin, []string{"TXNSCOPE_SASL_PASSWORD=" + aclPassword(aclScoped)}, "list",
		"-b", b.SecureBootstrap, "--tls", "--tls-ca", b.Certs.CAFile, "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-username", aclScoped)
	noSecrets(t, l, []string{aclPassword(aclScoped)})
	if l.code != 0 || listRow(l.stdout, visible[0]) == "" || listRow(l.stdout, visible[1]) == "" ||
		strings.Contains(l.stdout, hidden) || !strings.Contains(l.stderr, model.HiddenIDs) {
		t.Errorf("%s's list: want exit 0, the visible ids only, and %q on stderr\n%s", aclScoped, model.HiddenIDs, l)
	}

	// And on screen: the TUI as the restricted user says that ids are hidden.
	t.Run("tui", func(t *testing.T) {
		pwFile := filepath.Join(t.TempDir(), "pw")
		if err := os.WriteFile(pwFile, []byte(aclPassword(aclScoped)), 0o600); err != nil {
			t.Fatal(err)
		}
		s := startTUI(ctx, t, b.SecureBootstrap, "--tls", "--tls-ca", b.Certs.CAFile, "--sasl-mechanism", "SCRAM-SHA-512",
			"--sasl-username", aclScoped, "--sasl-password-file", pwFile)
		// Long ids are shortened in the middle: their random tails tell them apart.
		want := []string{"hidden by ACLs", "2 ids"}
		for _, id := range visible {
			want = append(want, id[len(id)-10:])
		}
		screen := s.WaitText(want)
		if strings.Contains(screen, "txnscope-it-hidden") || strings.Contains(screen, aclPassword(aclScoped)) {
			t.Errorf("the screen shows the hidden id or the password:\n%s", screen)
		}
		s.quit()
	})
}

// (b) DESCRIBE without READ on one topic, neither on another. The transaction shows; on the first
// topic its partition's offsets show and its producer state says "no permission". The broker
// itself leaves the second topic's partitions out of DescribeTransactions (it filters them by
// DESCRIBE), so they show only when watched: "no permission", offsets unknown, never zero.
func aclNoReadTopic(ctx context.Context, t *testing.T, b *Broker, adm *kadm.Client, setup *kadm.Client) {
	open := topicOn(ctx, t, setup)
	secret := topicOn(ctx, t, setup)
	describeOnly := topicOn(ctx, t, setup)
	allow(ctx, t, adm,
		kadm.NewACLs().Allow("User:"+aclNoRead).Topics(open.Topic).Operations(kadm.OpRead, kadm.OpDescribe),
		kadm.NewACLs().Allow("User:"+aclNoRead).Topics(describeOnly.Topic).Operations(kadm.OpDescribe))
	id := name(t, "txn")
	p := producer(t, b.Bootstrap, id, 10*time.Minute)
	openTxn(ctx, t, p, open, 2, "open")
	produce(ctx, t, p, secret, 2, "secret")
	produce(ctx, t, p, describeOnly, 2, "describe-only")

	s := secureScope(t, b, aclNoRead, secret)
	snap := s.until(ctx, id+" Ongoing, and each of its partitions read", func(snap *model.Snapshot) bool {
		tx, ok := snap.Txn(id)
		if !ok || tx.State != model.Ongoing || len(tx.Partitions) < 2 {
			return false
		}
		for _, tp := range []model.TopicPartition{open, secret, describeOnly} {
			if _, ok := snap.Partition(tp); !ok {
				return false
			}
		}
		return true
	})
	tx := txnOf(t, snap, id)
	if tx.Err != "" {
		t.Errorf("%s: transaction error %q, want none (DESCRIBE on the id is allowed)", id, tx.Err)
	}
	if want := []model.TopicPartition{describeOnly, open}; !slices.Equal(sortedTPs(tx.Partitions), sortedTPs(want)) {
		t.Errorf("%s lists partitions %v, want %v (the broker leaves out what the principal may not DESCRIBE)", id, tx.Partitions, want)
	}

	ok := partOf(t, snap, open)
	if ok.Err != "" || ok.HighWatermark != 2 || ok.LastStableOffset != 0 || len(ok.Producers) != 1 {
		t.Errorf("readable %s-%d: %+v, want no error, HWM 2, LSO 0 and the producer", open.Topic, open.Partition, ok)
	}

	half := partOf(t, snap, describeOnly)
	if !strings.HasPrefix(half.Err, model.NoPermission) || !half.ProducersDenied || half.OffsetsDenied || half.Producers != nil {
		t.Errorf("%s-%d with DESCRIBE only: Err %q ProducersDenied %v OffsetsDenied %v producers %v; want %q…, producers denied (nil), offsets read",
			describeOnly.Topic, describeOnly.Partition, half.Err, half.ProducersDenied, half.OffsetsDenied, half.Producers, model.NoPermission)
	}
	if half.HighWatermark != 2 || half.LastStableOffset != 0 {
		t.Errorf("%s-%d with DESCRIBE only: HWM %d LSO %d, want 2 and 0", describeOnly.Topic, describeOnly.Partition, half.HighWatermark, half.LastStableOffset)
	}

	denied := partOf(t, snap, secret)
	if !strings.HasPrefix(denied.Err, model.NoPermission) || !denied.OffsetsDenied || !denied.ProducersDenied {
		t.Errorf("watched %s-%d without READ or DESCRIBE: Err %q OffsetsDenied %v ProducersDenied %v; want %q… and both denied",
			secret.Topic, secret.Partition, denied.Err, denied.OffsetsDenied, denied.ProducersDenied, model.NoPermission)
	}
	if denied.HighWatermark != -1 || denied.LastStableOffset != -1 || denied.Producers != nil || denied.Pinned() {
		t.Errorf("watched %s-%d without READ or DESCRIBE: HWM %d LSO %d producers %v; want unknown (-1), none, not pinned",
			secret.Topic, secret.Partition, denied.HighWatermark, denied.LastStableOffset, denied.Producers)
	}
	endTxn(ctx, t, p, false)
}

func sortedTPs(tps []model.TopicPartition) []model.TopicPartition {
	out := slices.Clone(tps)
	slices.SortFunc(out, func(a, b model.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return out
}

// (c) The partition abort (WriteTxnMarkers) by a principal without CLUSTER_ACTION or ALTER on the
// cluster, on a genuinely hanging partition: sent, refused by the broker with
// CLUSTER_AUTHORIZATION_FAILED, and the partition stays pinned; the super user's abort then works.
func aclPartitionAbort(ctx context.Context, t *testing.T, b *Broker, setup *kadm.Client) {
	tp := topicOn(ctx, t, setup)
	id := name(t, "hanging")
	var pid int64
	for {
		// A new topic's leader may not serve it yet: ask again until it does.
		var err error
		pid, _, err = produceUnaddedTxnBatch(ctx, t, b.Bootstrap, tp.Topic, id)
		if err == nil {
			break
		}
		if !errors.Is(err, kerr.UnknownTopicOrPartition) && !errors.Is(err, kerr.NotLeaderForPartition) {
			t.Fatalf("hanging batch: %v", err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("hanging batch: %v (last %v)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	op := secureScope(t, b, aclOperator)
	var pr model.Producer
	snap := op.until(ctx, "the hanging producer on "+tp.Topic, func(s *model.Snapshot) bool {
		p, ok := s.Partition(tp)
		if !ok {
			return false
		}
		pr, ok = p.Producer(pid)
		return ok && pr.CurrentTxnStartOffset >= 0 && p.Pinned()
	})
	part := partOf(t, snap, tp)
	a := abortOn(part, pr)
	r := op.execute(ctx, a)
	if !r.Sent || r.Refused || r.ErrorCode != "CLUSTER_AUTHORIZATION_FAILED" || r.Err == "" {
		t.Fatalf("%s's partition abort: %+v\nwant it sent and refused by the broker with CLUSTER_AUTHORIZATION_FAILED and its message", aclOperator, r)
	}
	if sum := r.Summary(); !strings.HasPrefix(sum, "refused by the broker: CLUSTER_AUTHORIZATION_FAILED") {
		t.Errorf("summary %q, want it to start with %q", sum, "refused by the broker: CLUSTER_AUTHORIZATION_FAILED")
	}
	if hwm, lso := offsetsOf(ctx, t, setup, tp); lso >= hwm {
		t.Errorf("after the refused abort %s-%d has LSO %d HWM %d: want it still pinned", tp.Topic, tp.Partition, lso, hwm)
	}

	// The same action by the super user goes through: only the ACL stood in the way.
	if r := secureScope(t, b, aclAdmin).execute(ctx, a); !r.OK() {
		t.Fatalf("super user's partition abort: %+v", r)
	}
	if hwm, lso := offsetsOf(ctx, t, setup, tp); lso != hwm {
		t.Errorf("after the super user's abort %s-%d has LSO %d HWM %d: want them equal", tp.Topic, tp.Partition, lso, hwm)
	}
}

// (d) Force-terminate by a principal that may DESCRIBE the id but not WRITE it: sent, refused by
// the broker with TRANSACTIONAL_ID_AUTHORIZATION_FAILED, and the transaction stays open.
func aclForceTerminate(ctx context.Context, t *testing.T, bin string, b *Broker, setup *kadm.Client) {
	tp := topicOn(ctx, t, setup)
	id := name(t, "txn")
	p := producer(t, b.Bootstrap, id, 10*time.Minute)
	openTxn(ctx, t, p, tp, 1, "open")

	op := secureScope(t, b, aclOperator)
	_, tx := op.untilState(ctx, id, model.Ongoing)
	r := op.execute(ctx, forceTerminate(tx))
	if !r.Sent || r.Refused || r.ErrorCode != "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" || r.Err == "" {
		t.Fatalf("%s's force-terminate: %+v\nwant it sent and refused by the broker with TRANSACTIONAL_ID_AUTHORIZATION_FAILED and its message", aclOperator, r)
	}
	if sum := r.Summary(); !strings.HasPrefix(sum, "refused by the broker: TRANSACTIONAL_ID_AUTHORIZATION_FAILED") {
		t.Errorf("summary %q, want it to start with %q", sum, "refused by the broker: TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
	}
	after := op.poll(ctx)
	if now := txnOf(t, after, id); now.State != model.Ongoing || now.ProducerEpoch != tx.ProducerEpoch {
		t.Errorf("after the refused force-terminate %s is %s epoch %d, want still Ongoing at epoch %d", id, now.State, now.ProducerEpoch, tx.ProducerEpoch)
	}

	// The one-shot command exits 1 with the broker's refusal, and its audit line holds the error
	// code and nothing secret.
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	r1 := runTxnscope(ctx, t, bin, []string{"TXNSCOPE_SASL_PASSWORD=" + aclPassword(aclOperator)},
		"force-terminate", "--transactional-id", id, "--yes", "--audit-log", auditLog,
		"-b", b.SecureBootstrap, "--tls", "--tls-ca", b.Certs.CAFile, "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-username", aclOperator)
	noSecrets(t, r1, []string{aclPassword(aclOperator)})
	wantFailure(t, r1, 1, []string{"TRANSACTIONAL_ID_AUTHORIZATION_FAILED"})
	audited, err := os.ReadFile(auditLog)
	switch {
	case err != nil:
		t.Errorf("no audit log: %v", err)
	case !strings.Contains(string(audited), "TRANSACTIONAL_ID_AUTHORIZATION_FAILED") || !strings.Contains(string(audited), id):
		t.Errorf("the audit log does not record the refused attempt on %s:\n%s", id, audited)
	case strings.Contains(string(audited), aclPassword(aclOperator)):
		t.Errorf("the password is in the audit log:\n%s", audited)
	}
	endTxn(ctx, t, p, true) // the producer was never fenced
}

// aclSnapshotJSON runs `txnscope snapshot -o json` as user, its password in the environment.
func aclSnapshotJSON(ctx context.Context, t *testing.T, bin string, b *Broker, user string) jsonout.SnapshotJSON {
	t.Helper()
	r := runTxnscope(ctx, t, bin, []string{"TXNSCOPE_SASL_PASSWORD=" + aclPassword(user)}, "snapshot", "-o", "json",
		"-b", b.SecureBootstrap, "--tls", "--tls-ca", b.Certs.CAFile, "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-username", user)
	noSecrets(t, r, []string{aclPassword(user)})
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r)
	}
	var s jsonout.SnapshotJSON
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r)
	}
	return s
}

// (f) Nothing on the cluster and no DESCRIBE on groups (the operator): the brokers' maximum
// transaction timeout (DescribeConfigs) and the consumer groups are unknown to it, and said to
// be: no group is called stuck behind a pin the super user sees it stuck behind, no timeout
// rule is judged, the JSON's broker_max_timeout_ms is null, and the exporter's unknowns name
// both.
func aclClusterAndGroupsDenied(ctx context.Context, t *testing.T, bin string, b *Broker, setup *kadm.Client) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	tp := topicOn(ctx, t, setup)
	// Records committed before the pin: the group reads them, commits an
	// offset, and then waits at the LSO (with none it has nothing to be stuck at).
	before := producer(t, b.Bootstrap, name(t, "before"), time.Minute)
	openTxn(ctx, t, before, tp, 2, "before")
	endTxn(ctx, t, before, true)
	p := producer(t, b.Bootstrap, name(t, "txn"), 10*time.Minute)
	openTxn(ctx, t, p, tp, 1, "open")
	after := producer(t, b.Bootstrap, name(t, "after"), time.Minute)
	openTxn(ctx, t, after, tp, 1, "after")
	endTxn(ctx, t, after, true)
	group := name(t, "group")
	readCommittedGroup(t, b.Bootstrap, group, tp.Topic) // PLAINTEXT: the anonymous super user

	stuckFor := func(sc *scope, what string) *model.Snapshot {
		track := model.NewPinTracker()
		return sc.until(ctx, what, func(s *model.Snapshot) bool {
			track.Observe(s)
			pin, ok := pinOn(model.Pins(s, track, s.TakenAt), tp)
			if !ok {
				return false
			}
			if _, stuck := stuckGroup(pin, group); stuck {
				return true
			}
			return s.GroupsErr != ""
		})
	}
	if s := stuckFor(secureScope(t, b, aclAdmin), "the group stuck behind the pin, for the super user"); s.GroupsErr != "" || s.BrokerMaxTimeoutMs <= 0 {
		t.Fatalf("super user: groups error %q, max timeout %d; want none and Kafka's", s.GroupsErr, s.BrokerMaxTimeoutMs)
	}

	snap := stuckFor(secureScope(t, b, aclOperator), "the pin, and the groups said unknown, for "+aclOperator)
	if pin, ok := pinOn(model.Pins(snap, nil, snap.TakenAt), tp); ok {
		if g, stuck := stuckGroup(pin, group); stuck {
			t.Errorf("%s: %s called stuck (%+v) though its DESCRIBE is denied", aclOperator, group, g)
		}
	}
	if !strings.Contains(snap.GroupsErr, model.NoPermission) {
		t.Errorf("%s: groups error %q, want it to say %q", aclOperator, snap.GroupsErr, model.NoPermission)
	}
	if snap.BrokerMaxTimeoutMs != 0 {
		t.Errorf("%s: max transaction timeout %d ms without DESCRIBE_CONFIGS on the cluster, want unknown (0)", aclOperator, snap.BrokerMaxTimeoutMs)
	}
	u := exporter.Compute(snap, nil, nil, time.Now()).Unknown
	if !u["max_transaction_timeout"] || !u["consumer_groups"] || u["transactional_ids"] {
		t.Errorf("%s: the exporter's unknowns %v, want max_transaction_timeout and consumer_groups, not transactional_ids", aclOperator, u)
	}
	js := aclSnapshotJSON(ctx, t, bin, b, aclOperator)
	if js.BrokerMaxTimeoutMs != nil {
		t.Errorf("%s's snapshot -o json: broker_max_timeout_ms %d, want null", aclOperator, *js.BrokerMaxTimeoutMs)
	}
	for _, g := range js.StuckGroups {
		if g.Group == group {
			t.Errorf("%s's snapshot -o json: %s in stuck_groups", aclOperator, group)
		}
	}
}
