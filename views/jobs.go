package views

import (
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
)

// JobsData is the jobs view: the snapshot's ids grouped by the job their
// names say they belong to (model.Jobs), most urgent first. Problems are
// worked out for the visible rows only, against Snap and Query.
type JobsData struct {
	Jobs   []model.Job
	Cursor int
	Top    int
	Now    time.Time
	Snap   *model.Snapshot
	Query  model.Query
	Empty  string
}

// JobRow is one line of the jobs view.
type JobRow struct {
	J        *model.Job
	Now      time.Time
	Problems []model.Problem
}

// JobName is a job's name as screen text: the Flink prefix or the Streams
// application.id (both chosen by whoever runs the producer), or "other".
func JobName(id model.JobID) string {
	if id.Family == model.OtherFamily {
		return "other"
	}
	return name(id.Name)
}

// checkpoint is a checkpoint id, or – for none.
func checkpoint(c int64) string {
	if c < 0 {
		return "–"
	}
	return strconv.FormatInt(c, 10)
}

// jobCheckpoint is c, or "pool" for a POOLING job, whose ids are
// numbered by slot: no checkpoint can be read off them. A Streams app has
// no checkpoints: its commit cadence stands where Flink's checkpoint does
// (~1.0s), in the CKPT column only.
func jobCheckpoint(j *model.Job, c int64, ckpt bool) string {
	switch {
	case j.Pooling:
		return "pool"
	case j.ID.Family == model.StreamsApp && ckpt && j.Cadence > 0:
		return "~" + cadence(j.Cadence)
	}
	return checkpoint(c)
}

// cadence is a commit cadence: tenths of a second below 10 s, – unknown.
func cadence(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < 10*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return Dur(d)
}

// unitCheckpoint is c, or what the unit is when it is no subtask now.
func unitCheckpoint(r UnitRow, c int64) string {
	switch {
	case r.U.Probe:
		return "probe"
	case r.Job != nil && r.Job.Pooling:
		return "pool"
	case r.U.Retired && c == r.U.NewestCheckpoint:
		return "gone"
	}
	return checkpoint(c)
}

// since is how long ago t was, or – when never.
func since(t, now time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return Dur(now.Sub(t))
}

func countOrBlank(n int) string {
	if n == 0 {
		return ""
	}
	return Count(n)
}

// JobColumns are the jobs view's columns, in order. On a narrow terminal
// the counts of ids, subtasks and outcomes go first; the job, its open and
// lingering transactions and its problems stay.
func JobColumns() []Column[JobRow] {
	return []Column[JobRow]{
		{Name: "FAMILY", Width: 7, Drop: 4, Text: func(r JobRow) string { return string(r.J.ID.Family) }},
		{Name: "JOB", Width: 18, Flex: true, Max: 20, Clip: ClipMiddle, Text: func(r JobRow) string { return JobName(r.J.ID) }},
		{Name: "IDS", Width: 6, Right: true, Drop: 1, Text: func(r JobRow) string { return Count(r.J.IDs) }},
		{Name: "TASKS", Width: 5, Right: true, Drop: 2, Text: func(r JobRow) string { return countOrBlank(r.J.Tasks) }},
		{Name: "CKPT", Width: 6, Right: true, Drop: 3, Text: func(r JobRow) string { return jobCheckpoint(r.J, r.J.NewestCheckpoint, true) }},
		{Name: "COMMITTED", Width: 9, Right: true, Drop: 8, Text: func(r JobRow) string { return jobCheckpoint(r.J, r.J.NewestCommitted, false) }},
		{Name: "OPEN", Width: 5, Right: true, Text: func(r JobRow) string { return countOrBlank(len(r.J.Open)) }},
		{Name: "LINGER", Width: 6, Right: true, Text: func(r JobRow) string { return countOrBlank(len(r.J.Lingering)) },
			Style: func(_ JobRow, st *Styles) Ink { return st.Danger }},
		{Name: "AGE/TIMEOUT", Width: 11, Drop: 11, Text: func(r JobRow) string {
			if row, ok := oldestRow(&r.J.Oldest, r.Now); ok {
				return ratioText(row)
			}
			return "–"
		}, Cell: oldestCell(func(r JobRow) (*model.Txn, time.Time) { return &r.J.Oldest, r.Now })},
		{Name: "COMMIT", Width: 6, Right: true, Drop: 12, Text: func(r JobRow) string { return since(r.J.LastCommit, r.Now) }},
		{Name: "SLOWEST", Width: 7, Right: true, Drop: 7, Text: func(r JobRow) string { return since(r.J.SlowestCommit, r.Now) }},
		{Name: "FENCE", Width: 5, Right: true, Drop: 6, Text: func(r JobRow) string { return countOrBlank(r.J.Fences5m) },
			Style: func(_ JobRow, st *Styles) Ink { return st.Danger }},
		{Name: "ABORTS", Width: 6, Right: true, Drop: 5, Text: func(r JobRow) string { return countOrBlank(r.J.Aborts5m) }},
		{Name: "PINNED", Width: 6, Right: true, Drop: 10, Text: func(r JobRow) string { return countOrBlank(len(r.J.Pinned)) },
			Style: func(_ JobRow, st *Styles) Ink { return st.Warn }},
		{Name: "STUCK", Width: 5, Right: true, Drop: 9, Text: func(r JobRow) string { return countOrBlank(len(r.J.StuckGroups)) },
			Style: func(_ JobRow, st *Styles) Ink { return st.Warn }},
		{Name: "PROBLEMS", Width: 12, Flex: true, Text: problemsText, Cell: func(r JobRow, w int, st *Styles) string {
			// The count of the others stays when the first is cut.
			more := ""
			if n := len(r.Problems) - 1; n > 0 {
				more = " +" + strconv.Itoa(n)
			}
			s := ""
			if len(r.Problems) > 0 {
				s = Clip(problemLabel(r.Problems[0]), w-len(more)) + more
			}
			s = pad(s, w, false)
			if st == nil {
				return s
			}
			if len(r.J.Lingering) > 0 {
				return st.Danger.Render(s)
			}
			return st.Warn.Render(s)
		}},
	}
}

// jobColumnsFor is JobColumns with the JOB column allowed as wide as the
// longest name, up to maxJobName: Flink prefixes are often long, and a
// name cut in the middle is hard to search for.
func jobColumnsFor(jobs []model.Job) []Column[JobRow] {
	cols := JobColumns()
	longest := 0
	for i := range jobs {
		longest = max(longest, ansi.StringWidth(JobName(jobs[i].ID)))
	}
	for i := range cols {
		if cols[i].Name == "JOB" {
			cols[i].Max = max(cols[i].Max, min(longest, maxJobName))
		}
	}
	return cols
}

const maxJobName = 40

// oldestRow is the row the age/timeout gauge of a job or subtask is drawn
// from: its oldest open transaction.
func oldestRow(t *model.Txn, now time.Time) (Row, bool) {
	return Row{Txn: t, Now: now}, t.ID != ""
}

// oldestCell draws the age/timeout gauge of the oldest open transaction of.
func oldestCell[R any](of func(R) (*model.Txn, time.Time)) func(r R, w int, st *Styles) string {
	return func(r R, w int, st *Styles) string {
		if row, ok := oldestRow(of(r)); ok {
			return gaugeCell(row, w, st)
		}
		return pad("–", w, true)
	}
}

func problemsText(r JobRow) string {
	if len(r.Problems) == 0 {
		return ""
	}
	s := problemLabel(r.Problems[0])
	if n := len(r.Problems) - 1; n > 0 {
		s += " +" + strconv.Itoa(n)
	}
	return s
}

// problemLabel is a problem's what without its particulars (what follows
// ": " or " ("), for a column: the detail has them.
func problemLabel(p model.Problem) string {
	s := oneLine(p.What)
	for _, sep := range []string{": ", " ("} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	return s
}

// jobMarker is the two-cell sign in front of a job: !! lingering
// transactions, ! any other problem.
func jobMarker(r JobRow) string {
	switch {
	case len(r.J.Lingering) > 0:
		return "!!"
	case len(r.Problems) > 0:
		return "! "
	}
	return "  "
}

// Jobs draws the jobs view in exactly w×h: column titles, the visible rows
// and a status line.
func Jobs(d JobsData, w, h int, st Styles) string {
	if h <= 0 || w <= 0 {
		return ""
	}
	cols := Layout(jobColumnsFor(d.Jobs), w-markerWidth)
	lines := make([]string, 0, h)
	lines = append(lines, st.Section.Render(Fit(markerPad+HeaderLine(cols), w)))
	n := ListRows(h)
	if len(d.Jobs) == 0 && n > 0 {
		lines = append(lines, Lines(Center([]string{st.Dim.Render(d.Empty)}, w, n))...)
	}
	for i := d.Top; i < d.Top+n && i < len(d.Jobs) && i >= 0; i++ {
		j := &d.Jobs[i]
		r := JobRow{J: j, Now: d.Now, Problems: j.Problems(d.Snap, d.Query, d.Now)}
		lines = append(lines, markedLine(jobMarker(r), RowLine(cols, r, nil), RowLine(cols, r, &st), i == d.Cursor, w, &st))
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	lingering := 0
	for i := range d.Jobs {
		lingering += len(d.Jobs[i].Lingering)
	}
	right := []string{st.Dim.Render(Count(len(d.Jobs)) + plural(len(d.Jobs), " job", " jobs"))}
	if lingering > 0 {
		right = append([]string{st.Danger.Render(Count(lingering) + " LINGERING")}, right...)
	}
	left := st.Dim.Render("jobs by their ids' names · most urgent first")
	lines = append(lines[:h-1], Spread(left, strings.Join(right, st.Dim.Render(" · ")), w))
	return Block(lines, w, h)
}

// markedLine is a row behind the cursor cell and its marker: plain and in
// reverse video under the cursor, coloured otherwise.
func markedLine(mark, plain, styled string, selected bool, w int, st *Styles) string {
	if selected {
		return st.Selected.Render(Fit(cursorMark(true)+mark+" "+plain, w))
	}
	switch mark {
	case "!!":
		mark = st.Danger.Render(mark)
	case "! ":
		mark = st.Warn.Render(mark)
	}
	return Fit(cursorMark(false)+mark+" "+styled, w)
}

// JobDetailData is one job: a row per subtask (Flink) or task/thread
// (Streams), and the job's problems under them, each with its why and way
// out.
type JobDetailData struct {
	Job      *model.Job
	Problems []model.Problem
	Cursor   int
	Top      int
	Now      time.Time
}

// UnitRow is one line of a job's subtasks.
type UnitRow struct {
	U   *model.Unit
	Job *model.Job
	Now time.Time
}

// UnitColumns are a job's subtask columns, in order.
func UnitColumns() []Column[UnitRow] {
	return []Column[UnitRow]{
		{Name: "SUBTASK", Width: 8, Flex: true, Max: 24, Clip: ClipMiddle, Text: func(r UnitRow) string {
			if r.U.Subtask >= 0 {
				return strconv.Itoa(r.U.Subtask)
			}
			return name(r.U.Name)
		}},
		{Name: "IDS", Width: 6, Right: true, Drop: 3, Text: func(r UnitRow) string { return Count(r.U.IDs) }},
		{Name: "CKPT", Width: 6, Right: true, Drop: 2, Text: func(r UnitRow) string { return unitCheckpoint(r, r.U.NewestCheckpoint) }},
		{Name: "COMMITTED", Width: 9, Right: true, Text: func(r UnitRow) string { return unitCheckpoint(r, r.U.NewestCommitted) },
			Style: func(r UnitRow, st *Styles) Ink {
				if r.U.Behind {
					return st.Warn
				}
				return st.Text
			}},
		{Name: "OPEN", Width: 5, Right: true, Text: func(r UnitRow) string { return countOrBlank(len(r.U.Open)) }},
		{Name: "AGE/TIMEOUT", Width: 11, Flex: true, Max: 14, Drop: 4, Text: func(r UnitRow) string {
			if row, ok := oldestRow(&r.U.Oldest, r.Now); ok {
				return ratioText(row)
			}
			return "–"
		}, Cell: oldestCell(func(r UnitRow) (*model.Txn, time.Time) { return &r.U.Oldest, r.Now })},
		{Name: "LINGER", Width: 6, Right: true, Text: func(r UnitRow) string { return countOrBlank(len(r.U.Lingering)) },
			Style: func(_ UnitRow, st *Styles) Ink { return st.Danger }},
		{Name: "COMMIT", Width: 6, Right: true, Drop: 1, Text: func(r UnitRow) string { return since(r.U.LastCommit, r.Now) }},
		{Name: "LINGERING IDS", Width: 14, Flex: true, Text: func(r UnitRow) string {
			ids := make([]string, len(r.U.Lingering))
			for i, id := range r.U.Lingering {
				ids[i] = name(id)
			}
			return strings.Join(ids, ", ")
		}, Style: func(_ UnitRow, st *Styles) Ink { return st.Danger }},
	}
}

// StreamsUnitColumns are a Streams app's thread columns: the process (the
// UUID its ids carry, kept in the instance's state directory) and the
// thread, and each thread's commit cadence where Flink's subtasks show
// checkpoints. Ids of the older exactly_once scheme name a task instead.
func StreamsUnitColumns() []Column[UnitRow] {
	cols := []Column[UnitRow]{
		{Name: "PROCESS", Width: 9, Flex: true, Max: 36, Clip: ClipMiddle, Text: func(r UnitRow) string {
			if p, _, ok := model.StreamsThread(r.U.Name); ok {
				return name(p)
			}
			return "–"
		}},
		{Name: "THREAD", Width: 6, Right: true, Text: func(r UnitRow) string {
			if _, th, ok := model.StreamsThread(r.U.Name); ok {
				return name(th)
			}
			return "task " + name(r.U.Name)
		}},
		{Name: "CADENCE", Width: 7, Right: true, Drop: 2, Text: func(r UnitRow) string { return cadence(r.U.Cadence) }},
	}
	for _, c := range UnitColumns() {
		switch c.Name {
		case "OPEN", "AGE/TIMEOUT", "COMMIT":
			cols = append(cols, c)
		}
	}
	return cols
}

// streamsShape is the status line's count of a Streams app's units: its
// threads, the processes they run in, and its commit cadence.
func streamsShape(j *model.Job) string {
	procs := map[string]bool{}
	threads := 0
	for _, u := range j.Units {
		if p, _, ok := model.StreamsThread(u.Name); ok {
			procs[p] = true
			threads++
		}
	}
	out := Count(len(j.Units)) + plural(len(j.Units), " task", " tasks")
	if threads == len(j.Units) {
		out = Count(threads) + plural(threads, " thread", " threads") + " in " + Count(len(procs)) + plural(len(procs), " process", " processes")
	}
	if j.Cadence > 0 {
		out += " · commits every " + cadence(j.Cadence)
	}
	return out
}

// problemLine is one line of a job's problems: danger for the lingering
// ones, warn for the rest.
type problemLine struct {
	text   string
	danger bool
}

// jobProblemLines are the lines a job's problems take in w×h, in half of
// what the subtasks' table leaves at most: each one's what, and, most
// urgent first, as many of them as fit with their why and way out wrapped
// under it; whats beyond the room are left out.
func jobProblemLines(ps []model.Problem, w, h int) []problemLine {
	room := max(0, (h-3)/2)
	blocks := make([][]problemLine, len(ps))
	used := 0
	for i, p := range ps {
		blocks[i] = []problemLine{{"  ! " + oneLine(p.What), p.Kind == model.ProblemLingering}}
		used++
	}
	for i, p := range ps {
		var more []problemLine
		for _, part := range []struct{ label, text string }{{"why: ", p.Why}, {"way out: ", p.WayOut}} {
			for k, l := range Wrap(part.label+oneLine(part.text), max(w-6, 1)) {
				lead := "    "
				if k > 0 {
					lead = "      "
				}
				more = append(more, problemLine{lead + l, p.Kind == model.ProblemLingering})
			}
		}
		if used+len(more) > room {
			break
		}
		blocks[i] = append(blocks[i], more...)
		used += len(more)
	}
	var out []problemLine
	for _, b := range blocks {
		out = append(out, b...)
	}
	return out[:min(len(out), room)]
}

// JobDetailRows is how many subtask rows JobDetail shows in w×h.
func JobDetailRows(problems []model.Problem, w, h int) int {
	return max(0, h-ListChrome-len(jobProblemLines(problems, w, h)))
}

// JobDetail draws one job in exactly w×h: its subtasks, its problems, and
// a status line naming it.
func JobDetail(d JobDetailData, w, h int, st Styles) string {
	if h <= 0 || w <= 0 {
		return ""
	}
	unitCols := UnitColumns()
	if d.Job != nil && d.Job.ID.Family == model.StreamsApp {
		unitCols = StreamsUnitColumns()
	}
	cols := Layout(unitCols, w-markerWidth)
	lines := make([]string, 0, h)
	lines = append(lines, st.Section.Render(Fit(markerPad+HeaderLine(cols), w)))
	problems := jobProblemLines(d.Problems, w, h)
	n := max(0, h-ListChrome-len(problems))
	var units []model.Unit
	if d.Job != nil {
		units = d.Job.Units
	}
	if len(units) == 0 && n > 0 {
		msg := "the job's ids name no subtask"
		if d.Job == nil {
			msg = "the job is gone: none of its ids is on the cluster any more"
		}
		lines = append(lines, Lines(Center([]string{st.Dim.Render(msg)}, w, n))...)
	}
	for i := d.Top; i < d.Top+n && i < len(units) && i >= 0; i++ {
		r := UnitRow{U: &units[i], Job: d.Job, Now: d.Now}
		mark := "  "
		switch {
		case len(r.U.Lingering) > 0:
			mark = "!!"
		case r.U.Behind:
			mark = "! "
		}
		lines = append(lines, markedLine(mark, RowLine(cols, r, nil), RowLine(cols, r, &st), i == d.Cursor, w, &st))
	}
	for len(lines) < h-1-len(problems) {
		lines = append(lines, "")
	}
	lines = lines[:h-1-len(problems)]
	for _, p := range problems {
		ink := st.Warn
		if p.danger {
			ink = st.Danger
		}
		lines = append(lines, ink.Render(Fit(p.text, w)))
	}
	left := st.Dim.Render("job ")
	right := st.Dim.Render("")
	if d.Job != nil {
		j := d.Job
		left += st.Text.Render(string(j.ID.Family)+" "+JobName(j.ID)) + st.Dim.Render(" · "+Count(j.IDs)+" ids")
		// The subtasks' count always; what the job holds up as far as it fits.
		parts := []string{Count(len(units)) + plural(len(units), " subtask", " subtasks")}
		if j.ID.Family == model.StreamsApp {
			parts[0] = streamsShape(j)
		}
		if j.Pooling {
			parts[0] += " · pooling"
		}
		if f := flinkPart(j, d.Now); f != "" && ansi.StringWidth(left)+2+ansi.StringWidth(parts[0])+3+ansi.StringWidth(f) <= w {
			parts = append(parts, f)
		}
		for _, more := range []struct {
			n         int
			one, many string
		}{{j.Fences5m, " fence in 5m", " fences in 5m"}, {j.Timeouts5m, " timeout in 5m", " timeouts in 5m"},
			{len(j.StuckGroups), " group stuck", " groups stuck"},
			{len(j.Pinned), " partition pinned", " partitions pinned"}} {
			text := Count(more.n) + plural(more.n, more.one, more.many)
			if more.n > 0 && ansi.StringWidth(left)+2+ansi.StringWidth(strings.Join(parts, " · "))+3+len(text) <= w {
				parts = append([]string{text}, parts...)
			}
		}
		right = st.Dim.Render(strings.Join(parts, " · "))
	}
	lines = append(lines, Spread(left, right, w))
	return Block(lines, w, h)
}

// flinkPart is what Flink's REST API says of the job, for its status line:
// its state and latest completed checkpoint ("" when not matched), or that
// which Flink job it is cannot be told (its verdicts say why).
func flinkPart(job *model.Job, now time.Time) string {
	m := job.Flink
	switch {
	case m == nil && job.FlinkNote != "":
		return "Flink job not known"
	case m == nil:
		return ""
	}
	j := m.Job
	out := "Flink " + escape.Text(j.State)
	if j.Latest != nil {
		out += " · checkpoint " + strconv.FormatInt(j.Latest.ID, 10)
		if j.Latest.AckMs > 0 {
			out += " " + since(time.UnixMilli(j.Latest.AckMs), now) + " ago"
		}
	}
	if j.Err != "" {
		out += " · details unread"
	}
	return out
}
