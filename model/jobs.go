package model

import (
	"strconv"
	"strings"
	"time"
)

// Family is the kind of producer a transactional id's name says it comes
// from.
type Family string

const (
	// FlinkSink: Flink's KafkaSink, <prefix>-<subtask>-<checkpoint>.
	FlinkSink Family = "flink"
	// StreamsApp: Kafka Streams, <application.id>-<processId>-<thread>
	// (exactly_once_v2) or <application.id>-<subtopology>_<partition>
	// (the older exactly_once).
	StreamsApp Family = "streams"
	// OtherFamily: any other name; its ids are one job together.
	OtherFamily Family = "other"
)

// JobID names a job: a family and, but for OtherFamily, the name its ids
// share (the Flink prefix, the Streams application.id).
type JobID struct {
	Family Family
	Name   string
}

// UnitKey names a unit of a job (Unit "" for the job's ids that name none).
type UnitKey struct {
	Job  JobID
	Unit string
}

// Member is where an id sits in its job: the Flink subtask and checkpoint,
// the Streams task or thread as Unit (Checkpoint -1).
type Member struct {
	Job        JobID
	Unit       string
	Subtask    int // Flink only, -1 otherwise
	Checkpoint int64
}

// JobOf reads the job an id belongs to from its name. Streams' process ids
// are UUIDs, whose last group may be all digits: they are tried first, or a
// Streams id would pass for a Flink one.
func JobOf(id string) Member {
	if app, unit, ok := streamsV2(id); ok {
		return Member{Job: JobID{StreamsApp, app}, Unit: unit, Subtask: -1, Checkpoint: -1}
	}
	if app, task, ok := streamsTask(id); ok {
		return Member{Job: JobID{StreamsApp, app}, Unit: task, Subtask: -1, Checkpoint: -1}
	}
	if f, ok := ParseFlinkID(id); ok {
		return Member{Job: JobID{FlinkSink, f.Prefix}, Unit: strconv.Itoa(f.Subtask), Subtask: f.Subtask, Checkpoint: f.Checkpoint}
	}
	return Member{Job: JobID{Family: OtherFamily}, Subtask: -1, Checkpoint: -1}
}

// streamsV2 splits <app>-<8-4-4-4-12 hex uuid>-<thread>.
func streamsV2(id string) (app, unit string, ok bool) {
	last := strings.LastIndexByte(id, '-')
	if last <= 0 || !digits(id[last+1:]) {
		return "", "", false
	}
	const uuidLen = 36
	start := last - uuidLen
	if start < 2 || id[start-1] != '-' || !isUUID(id[start:last]) {
		return "", "", false
	}
	return id[:start-1], id[start:], true
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// streamsTask splits <app>-<subtopology>_<partition>.
func streamsTask(id string) (app, task string, ok bool) {
	last := strings.LastIndexByte(id, '-')
	if last <= 0 {
		return "", "", false
	}
	sub, part, found := strings.Cut(id[last+1:], "_")
	if !found || !digits(sub) || !digits(part) {
		return "", "", false
	}
	return id[:last], id[last+1:], true
}

// Job is what the ids of one job say together. Group works out what the
// snapshot tells; Grouping.Jobs adds what History saw.
type Job struct {
	ID    JobID
	IDs   int
	Units []Unit // by subtask (Flink), or by task or thread name
	// Tasks is how many of Units run now: Flink's probe ids and the
	// subtasks a rescale retired are not counted (Unit.Probe, Unit.Retired).
	Tasks int
	// Pooling: the job names its ids <prefix>-<subtask>-<slot> (Flink's
	// POOLING strategy, connector 4.0 and later), so their last number is a
	// slot the job reuses, not a checkpoint. Seen from a slot 0:
	// INCREMENTING numbers from checkpoint 1.
	Pooling bool
	// Open are the job's open transactions; Lingering those of them open
	// on a checkpoint older than the newest committed one of their subtask:
	// what a crashed attempt left behind (Flink only).
	Open, Lingering []string
	// LingeringFrom and LingeringUntil are when the coordinator aborts the
	// first and the last lingering transaction (start + timeout); zero when
	// none lingers or a timeout is not known.
	LingeringFrom, LingeringUntil time.Time
	// Oldest is the oldest open transaction (zero when none).
	Oldest Txn
	// NewestCheckpoint and NewestCommitted are over all subtasks (-1: none).
	NewestCheckpoint, NewestCommitted int64
	// LastCommit is the last commit History saw of any of the job's ids.
	LastCommit time.Time
	// LastActive is the latest sign that one of its producers works: a
	// commit, a transaction ended and the next begun between two polls
	// (outcome not seen), or an open transaction begun; LastLoss the last
	// transaction of it lost to a timeout or a fence. From History, zero
	// when it saw none (the Streams rules).
	LastActive, LastLoss time.Time
	// SlowestUnit is the subtask whose last commit is the oldest, of those
	// with one seen ("" when none), and SlowestCommit that commit.
	SlowestUnit   string
	SlowestCommit time.Time
	// Cadence is the job's recent commit cadence: the median of its
	// subtasks' Cadence (0: not known).
	Cadence time.Duration
	// Commits5m, Aborts5m: the outcomes of the last 5 minutes; of the
	// aborts its producers did not make, Fences5m are those another
	// producer made (fenced, force-terminated) and Timeouts5m those the
	// coordinator made at transaction.timeout.ms.
	Commits5m, Aborts5m, Fences5m, Timeouts5m int
	// LossMinutes is how many of the last 5 minutes saw a fence or a
	// timeout: a restart makes one, a crash loop one after another.
	LossMinutes int
	// LossRounds is the most times one unit lost a transaction (a timeout
	// or a fence) in the last 5 minutes, each begun after its previous
	// loss: the job ran again and lost again.
	LossRounds int
	// QuietEnds is how many of its transactions ended other than by a
	// commit or a timeout since History last saw one commit, the first of
	// them at QuietSince.
	QuietEnds  int
	QuietSince time.Time
	// MinTimeoutMs and MaxTimeoutMs span the described ids' timeouts (0:
	// none described).
	MinTimeoutMs, MaxTimeoutMs int32
	// Shared: History saw the job's prefix taken over by two jobs
	// (Collision), with Takeovers such takeovers in the window.
	Shared    bool
	Takeovers int
	// Sequences says, when not "", which subtask has two live transactions
	// open on checkpoints far apart: two jobs write one prefix (Shared).
	Sequences string
	// Flink is the Flink job its prefix matched (nil: no --flink, or no
	// match); FlinkNote why no JobManager's word is taken although some
	// were asked (one did not answer, several jobs match). OpenVerdicts say
	// of each open transaction whether its checkpoint completed, from
	// Flink and --flink-checkpoints (nil: nothing to say it from).
	Flink        *FlinkMatch
	FlinkNote    string
	OpenVerdicts []Verdict
	// Orphaned are open transactions of the job that no running subtask
	// will end (orphans.go), Lingering ones left out; OrphanedBy says how
	// that is known.
	Orphaned   []string
	OrphanedBy OrphanCause
	// Epoch is the job's id whose producer id rotates first (epoch.go),
	// of each unit's id at the highest epoch (zero: none known).
	Epoch EpochOutlook
	// Pinned are the partitions whose LSO one of the job's open
	// transactions holds (Pin.Blocking), by partition; StuckGroups the
	// read_committed groups waiting at them, by name.
	Pinned      []JobPin
	StuckGroups []string

	// committedID is one committed id of the job, to find when History's
	// baseline saw it commit.
	committedID string
	// committedStart is the latest start of its committed transactions
	// (the units' newest; 0: none known).
	committedStart int64
}

// JobPin is a partition whose LSO a job's open transaction (ID) holds,
// with the consumer groups stuck there.
type JobPin struct {
	TopicPartition
	ID     string
	Groups []string
	// LastWriteMs is when the pinning producer last wrote to the partition,
	// as the broker says (Unix ms, 0: not known); StartMs when its
	// transaction began, as the coordinator says (0: not known).
	LastWriteMs, StartMs int64
}

// Unit is one subtask of a Flink job, or one task or thread of a Streams
// application.
type Unit struct {
	Name             string
	Subtask          int
	IDs              int
	NewestCheckpoint int64
	NewestCommitted  int64
	LastCommit       time.Time
	// LastActive and LastLoss as the job's; FirstSeen is History's first
	// event of it (zero: none seen).
	LastActive, LastLoss, FirstSeen time.Time
	Open, Lingering                 []string
	// Oldest is the unit's oldest open transaction (zero when none).
	Oldest Txn
	// Behind: the subtask has a transaction open and its newest committed
	// checkpoint trails the job's by behindBy or more (Flink only).
	Behind bool
	// Probe: none of the unit's ids holds or held a transaction (all
	// Empty). On restore Flink initializes <prefix>-<subtask+parallelism>-
	// <checkpoint> and beyond to abort what a wider run may have left open
	// (PROBING): those ids are not subtasks.
	Probe bool
	// Retired: nothing open and its commits trail the job's by behindBy or
	// more: a subtask a rescale to a lower parallelism left behind, or one of
	// a run that no longer writes (Flink only).
	Retired bool
	// Cadence is the median gap between the subtask's last commits History
	// saw (0: fewer than minCadenceGaps gaps seen).
	Cadence time.Duration

	// committedID is the id of its newest committed checkpoint (any
	// committed id of other families); open are its open transactions.
	committedID string
	open        []openTxn
	// newestCommittedAt is when History saw NewestCommitted commit (zero:
	// unknown, or only the snapshot says it is committed).
	newestCommittedAt time.Time
	// logCommit is when the coordinators' log last wrote a commit of the
	// unit (zero: not known).
	logCommit time.Time
	// nextNewest is the highest checkpoint below NewestCheckpoint (-1: none).
	nextNewest int64
	// held: one of its ids held a transaction (see Probe); zeroSlot: one of
	// them is numbered 0 (see Job.Pooling).
	held, zeroSlot bool
	// committedStart is the latest start of its committed transactions, as
	// the coordinator reports it (0: none known).
	committedStart int64
	// topEpoch is its id at the highest producer epoch (ID "": none).
	topEpoch Txn
}

// openTxn is an open transaction of a unit, for the lingering rule.
type openTxn struct {
	id         string
	checkpoint int64
	pid        int64
	epoch      int16
	start      time.Time // zero when unknown
	deadline   time.Time // start + timeout, zero when either is unknown
	// ending: the coordinator is ending it already (PrepareCommit,
	// PrepareAbort, PrepareEpochFence: a new producer fences it).
	ending bool
	// predCommitted: the id of the checkpoint before it is committed: it
	// goes on from a sequence that commits (twoSequences).
	predCommitted bool
}

// Jobs groups s's ids into jobs, most urgent first: lingering
// transactions, then the oldest open transaction's share of its timeout,
// then the name. h may be nil. It is Group and Grouping.Jobs in one, for
// callers that hold the snapshot and the history at once.
func Jobs(s *Snapshot, h *History, now time.Time) []Job {
	return Group(s, PinsOf(s, nil, nil, now)).Jobs(h, now)
}

// JobsWith is Jobs with each Flink sink matched to its job in flink (nil:
// none).
func JobsWith(s *Snapshot, h *History, now time.Time, flink *FlinkView) []Job {
	g := Group(s, PinsOf(s, nil, nil, now))
	g.Flink = flink
	return g.Jobs(h, now)
}
