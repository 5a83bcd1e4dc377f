package flinkrest

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/txnscope/txnscope/internal/ckptstore"
	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
)

// A job that ended is resolved from its checkpoint itself: the JobManager,
// or Flink's History Server once the JobManager is gone, names the external
// path of its latest completed checkpoint (state.checkpoints.dir/<job
// id>/chk-N), and txnscope reads that job's directory as it reads a
// --flink-checkpoints location. Only for ended jobs: a running job resolves
// its own transactions.

var externalChk = regexp.MustCompile(`^(.+)/chk-\d+/?$`)

// maxExternal bounds the ended jobs whose checkpoints one read follows.
const maxExternal = 20

// readExternal reads, for each ended job that names the external path of
// its latest completed checkpoint, that job's checkpoint directory, by
// Flink job id; what could not be read says why.
func readExternal(ctx context.Context, src Sources, jobs []model.FlinkJob, timeout time.Duration) map[string]model.RetainedDir {
	var ended []model.FlinkJob
	for _, j := range jobs {
		if model.FlinkEnded(j.State) && j.Latest != nil && j.Latest.Path != "" {
			ended = append(ended, j)
		}
	}
	// A History Server keeps every archived run: the newest are the ones a
	// prefix's job is matched to (model.MatchFlink), and each read costs a
	// listing and a few objects.
	slices.SortFunc(ended, func(a, b model.FlinkJob) int { return cmp.Compare(b.StartMs, a.StartMs) })
	var out map[string]model.RetainedDir
	for i, j := range ended {
		if i == maxExternal {
			break
		}
		if out == nil {
			out = map[string]model.RetainedDir{}
		}
		st, err := externalStore(ctx, j.Source, j.Latest.Path, src.S3)
		if err != nil {
			out[j.ID] = model.RetainedDir{Dir: j.Latest.Path, Err: err.Error()}
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		out[j.ID] = ReadLocation(ctx, st, "")
		cancel()
	}
	return out
}

// externalStore is the job directory of the checkpoint at path, as a
// JobManager at jm names it. An object store's path is followed wherever
// it points (this user's credentials read it, and only Flink's _metadata
// is understood); a local path only when the JobManager itself is on this
// machine: a remote one's file: path is another machine's.
func externalStore(ctx context.Context, jm, path string, o ckptstore.S3Options) (ckptstore.Store, error) {
	m := externalChk.FindStringSubmatch(path)
	if m == nil {
		return nil, fmt.Errorf("the checkpoint path Flink names, %s, is not DIR/chk-N", escape.Quote(path))
	}
	dir := m[1]
	if strings.HasPrefix(dir, "file:") || strings.HasPrefix(dir, "/") {
		if !loopback(jm) {
			return nil, fmt.Errorf("the JobManager at %s names a local path, %s: another machine's files, not read here (give the job's checkpoints with --flink-checkpoints)", jm, escape.Quote(path))
		}
		// file:/a, file:///a and /a are one path.
		dir = "/" + strings.TrimLeft(strings.TrimPrefix(dir, "file:"), "/")
	}
	return ckptstore.Open(ctx, dir, o)
}

func loopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
