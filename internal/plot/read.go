package plot

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wire"
)

// Chart draws a picture of what was read, as a format, at a size.
type Chart func(w io.Writer, f Format, size Size) error

// Read reads r and returns its picture: a bench's runs, the nodes of a
// watch over several Macs, or the power over time of a watch of this Mac,
// a recording or a samples file. What it is comes from the "type" of its
// first JSON value (and a watch's line's "node"); anything else is a
// recording or a samples file. The title names what was measured: a
// bench's commands, a watch's nodes, the command of a samples file's
// rows, or for a recording or rows that name none, name: the input's
// name as the user would share it (its file's, not the path to it).
func Read(r io.Reader, name string) (Chart, error) {
	head, r, err := firstJSON(r)
	if err != nil {
		return nil, err
	}
	switch head.Type {
	case "bench":
		var rep bench.Report
		if err := json.NewDecoder(newBounded(r)).Decode(&rep); err != nil {
			return nil, fmt.Errorf("a bench's JSON: %w", err)
		}
		b := benchChart(&rep)
		if !slices.ContainsFunc(b.Commands, func(c BenchCommand) bool { return len(c.Energies) > 0 }) {
			return nil, cli.Fail(errors.New("a bench without a run: nothing to plot"), "plot a bench that made at least one run")
		}
		return func(w io.Writer, f Format, size Size) error { return WriteBench(w, f, size, b) }, nil
	case "sample", "total":
		if head.Type == "sample" && head.Node == "" {
			p, err := readMacLines(newBounded(r))
			if err != nil {
				return nil, err
			}
			return func(w io.Writer, f Format, size Size) error { return WritePower(w, f, size, p) }, nil
		}
		n, err := readNodeLines(newBounded(r))
		if err != nil {
			return nil, err
		}
		if len(n.Series) == 0 {
			return nil, cli.Fail(errors.New("watch --node --json lines without a node's window: nothing to plot"),
				"plot a watch that ran for at least one window of a node (-n, -d)")
		}
		return func(w io.Writer, f Format, size Size) error { return WriteNodes(w, f, size, n) }, nil
	case source.IOReportRecording:
		return recordingChart(r, name)
	case "summary":
		if len(head.Nodes) > 0 {
			return nil, cli.Fail(errors.New("a summary of several nodes (run --node --json) has no time series to plot"),
				"plot what exopower watch --node --json writes over the same time, or each Mac's own exopower run --samples FILE")
		}
		return nil, cli.Fail(errors.New("a summary has no time series to plot"),
			"plot the windows instead: those of run --samples FILE or of report --samples ndjson, or draw a run at once with run --plot FILE")
	}
	return recordingChart(r, name)
}

// recordingChart draws the power over time of a recording (powermetrics's
// or IOReport's) or a samples file, the input's name its title where
// the rows name no command (PowerOf).
func recordingChart(r io.Reader, name string) (Chart, error) {
	rows, err := readWindows(r)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer, f Format, size Size) error {
		return WritePower(w, f, size, PowerOf(name, rows))
	}, nil
}

// benchChart is what the plot of a bench shows: each command's runs, the
// idle Mac's energy over the command's mean duration when there is a
// baseline, and the commands and their comparison in the title.
func benchChart(rep *bench.Report) Bench {
	var names []string
	for _, r := range rep.Results {
		names = append(names, r.Command)
	}
	b := Bench{Title: "exopower bench: " + listed(names), Caption: caption(rep.Source)}
	least := -1
	for i, r := range rep.Results {
		c := BenchCommand{Name: r.Command}
		for _, run := range r.Runs {
			c.Energies = append(c.Energies, float64(run.EnergyJoules.Total))
		}
		if rep.Baseline != nil && r.DurationSeconds != nil {
			c.Idle = &Band{Center: float64(rep.Baseline.PowerWatts) * float64(r.DurationSeconds.Mean)}
			if u := r.NetEnergyUncertaintyJoules; u != nil {
				c.Idle.Error = float64(*u)
			}
		}
		c.Wall, c.IdleWall = benchWall(rep, r)
		b.Commands = append(b.Commands, c)
		if r.EnergyJoules != nil && (least < 0 || r.EnergyJoules.Mean < rep.Results[least].EnergyJoules.Mean) {
			least = i
		}
	}
	if least >= 0 {
		r := rep.Results[least]
		atWall := ""
		if r.Wall != nil && r.Wall.EnergyJoules != nil {
			atWall = fmt.Sprintf("; %s at the wall", output.Joules(float64(r.Wall.EnergyJoules.Mean)))
		}
		b.Title += fmt.Sprintf("\nleast energy: %s (%s on average%s)", shortenMiddle(r.Command, 40), output.Joules(float64(r.EnergyJoules.Mean)), atWall)
	}
	// A line each for a few commands; more would leave the data no room.
	if rep.Reference != nil && len(rep.Results) <= titleComparisons+1 {
		ref := rep.Results[*rep.Reference]
		for _, i := range rep.SummaryOrder() {
			if rel, ok := bench.Relate(ref, rep.Results[i]); ok && i != *rep.Reference {
				b.Title += fmt.Sprintf("\n%s ran %s %s", shortenMiddle(ref.Command, 32), rel.Than(), shortenMiddle(rep.Results[i].Command, 32))
			}
		}
	}
	if rep.Baseline == nil {
		b.Title += "\nno idle baseline (--baseline 0): gross energy only"
	}
	if !rep.Complete {
		b.Title += "\ncut short: the runs made by then"
	}
	return b
}

// benchWall is a command's runs at the wall, those the plug measured as
// bench counts them in its figures (their wall, MinWallCoverage of them
// covered), and the idle Mac's energy there over the command's mean
// duration, ± what the idle wall power's error makes of it; none
// without the wall.
func benchWall(rep *bench.Report, r bench.Result) ([]float64, *Band) {
	if r.Wall == nil {
		return nil, nil
	}
	var runs []float64
	for _, run := range r.Runs {
		if run.Wall != nil && run.Wall.Coverage >= bench.MinWallCoverage {
			runs = append(runs, float64(run.Wall.EnergyJoules))
		}
	}
	if rep.Baseline == nil || rep.Baseline.Wall == nil || r.DurationSeconds == nil {
		return runs, nil
	}
	idle := &Band{Center: float64(rep.Baseline.Wall.PowerWatts) * float64(r.DurationSeconds.Mean)}
	if u := r.Wall.NetEnergyUncertaintyJoules; u != nil {
		idle.Error = float64(*u)
	}
	return runs, idle
}

// titleComparisons is how many lines of comparison a bench's title
// holds at most: with more commands, none, and the JSON has them.
const titleComparisons = 3

// listed names the things of names in a line of a title: each of up to
// three, else the first two and how many more, each cut to 32 runes.
func listed(names []string) string {
	short := make([]string, len(names))
	for i, n := range names {
		short[i] = shortenMiddle(n, 32)
	}
	switch n := len(short); {
	case n == 0:
		return "no command"
	case n == 1:
		return short[0]
	case n <= 3:
		return strings.Join(short[:n-1], ", ") + " and " + short[n-1]
	default:
		return fmt.Sprintf("%s, %s and %d more", short[0], short[1], n-2)
	}
}

// watchLine is a line of watch --node --json: a node's window, a total,
// or the summary at the end.
type watchLine struct {
	wire.SampleLine
	// The summary's.
	StartedAt       string             `json:"started_at"`
	DurationSeconds wire.Num           `json:"duration_seconds"`
	AvgPowerWatts   wire.Components    `json:"avg_power_watts"`
	Source          wire.Source        `json:"source"`
	Nodes           []wire.NodeSummary `json:"nodes"`
}

// nodeLines gathers the lines of watch --node --json: a series per node
// (per label), in the order the nodes first come, times in seconds from base by each
// node's clock.
type nodeLines struct {
	base    time.Time
	series  []*NodeSeries
	byNode  map[string]*NodeSeries
	summary *watchLine
}

// readNodeLines reads the lines of watch --node --json. The totals are
// left out: they are summed again from the nodes' windows.
func readNodeLines(r io.Reader) (Nodes, error) {
	nl := nodeLines{byNode: map[string]*NodeSeries{}}
	dec := json.NewDecoder(r)
	for k := 1; ; k++ {
		var l watchLine
		err := dec.Decode(&l)
		if err == io.EOF {
			return nl.chart(), nil
		}
		if err != nil {
			return Nodes{}, fmt.Errorf("line %d: not a line of watch --node --json: %v", k, err)
		}
		if err := nl.add(l); err != nil {
			return Nodes{}, fmt.Errorf("line %d: %w", k, err)
		}
	}
}

func (nl *nodeLines) add(l watchLine) error {
	switch {
	case l.Type == "total":
	case l.Type == "summary":
		nl.summary = &l
	case l.Type == "sample" && l.Node == "":
		return errors.New("a line of this Mac alone amid the lines of watch --node --json: plot takes the lines of one watch")
	case l.Type == "sample":
		end, err := time.Parse(time.RFC3339Nano, l.Time)
		if err != nil {
			return fmt.Errorf("its time %q is not RFC 3339", l.Time)
		}
		// By its label: two Macs may have one name, and their windows,
		// joined, would run back and forth in time. Lines written before
		// labels have the name alone.
		name := cmp.Or(l.Label, l.Node)
		s := nl.byNode[name]
		if s == nil {
			s = &NodeSeries{Name: name}
			nl.byNode[name] = s
			nl.series = append(nl.series, s)
		}
		if nl.base.IsZero() {
			nl.base = end
		}
		// In whole nanoseconds, as the lines give them, so that the end of
		// a window and the start of the next are the same number.
		e := end.Sub(nl.base)
		d := e - time.Duration(math.Round(float64(l.WindowSeconds)*1e9))
		s.Windows = append(s.Windows, Step{Start: d.Seconds(), End: e.Seconds(), Watts: float64(l.PowerWatts.Total)})
	default:
		return fmt.Errorf("a line of type %q, not one of watch --node --json", l.Type)
	}
	return nil
}

// chart puts every node's windows on this Mac's clock, by the offset the
// summary measured (none without a summary), in seconds from the first
// window's start, and titles them with the nodes and the summary's
// energy.
func (nl *nodeLines) chart() Nodes {
	var names []string
	for _, s := range nl.series {
		names = append(names, s.Name)
	}
	title := fmt.Sprintf("exopower watch: %s", listed(names))
	offsets := map[string]float64{}
	if nl.summary != nil {
		for _, n := range nl.summary.Nodes {
			offsets[cmp.Or(n.Label, n.Node)] = float64(n.ClockOffsetSeconds)
		}
		title += fmt.Sprintf("\n%d nodes, %s over %.4g s, %s on average", len(nl.summary.Nodes),
			output.Joules(float64(nl.summary.EnergyJoules.Total)), float64(nl.summary.DurationSeconds),
			output.Watts(float64(nl.summary.AvgPowerWatts.Total)))
	} else {
		title += "\nno summary line: the watch did not end"
	}
	t0 := math.Inf(1)
	for _, s := range nl.series {
		off := offsets[s.Name]
		for i := range s.Windows {
			s.Windows[i].Start -= off
			s.Windows[i].End -= off
			t0 = min(t0, s.Windows[i].Start)
		}
	}
	n := Nodes{Title: title, Caption: nl.caption()}
	for _, s := range nl.series {
		for i := range s.Windows {
			s.Windows[i].Start -= t0
			s.Windows[i].End -= t0
		}
		slices.SortFunc(s.Windows, func(a, b Step) int { return cmp.Compare(a.Start, b.Start) })
		n.Series = append(n.Series, *s)
	}
	return n
}

// caption names the nodes' Macs and sources, from the summary: once
// where every node's are the same, else each node's after its name.
func (nl *nodeLines) caption() string {
	if nl.summary == nil || len(nl.summary.Nodes) == 0 {
		return ""
	}
	srcOf := func(n wire.NodeSummary) wire.Source {
		if n.Summary == nil {
			return wire.Source{}
		}
		return n.Summary.Source
	}
	first := srcOf(nl.summary.Nodes[0])
	var each []string
	same := true
	for _, n := range nl.summary.Nodes {
		src := srcOf(n)
		same = same && src == first
		if c := caption(wire.Source{HWModel: src.HWModel, Tool: src.Tool}); c != "" {
			each = append(each, cmp.Or(n.Label, n.Node)+": "+c)
		}
	}
	if same {
		return caption(first)
	}
	return strings.Join(each, "; ")
}

// jsonHead is what tells one JSON input of exopower's from another.
type jsonHead struct {
	Type  string            `json:"type"`
	Nodes []json.RawMessage `json:"nodes"`
	// Node names the Mac of a line of watch --node --json; a line of
	// watch --json of this Mac alone has none.
	Node string `json:"node"`
}

// firstJSON reads the first JSON value of r, if r starts with one, and
// returns it with r whole again. A value that does not decode has no
// type; a read that fails (a line past maxRun, a signal) is the error.
func firstJSON(r io.Reader) (jsonHead, io.Reader, error) {
	br := bufio.NewReader(r)
	var head jsonHead
	peek, _ := br.Peek(64)
	if !bytes.HasPrefix(bytes.TrimLeft(peek, " \t\r\n"), []byte("{")) {
		return head, br, nil
	}
	var read bytes.Buffer
	in := newBounded(br)
	if err := json.NewDecoder(io.TeeReader(in, &read)).Decode(&head); err != nil {
		if in.err != nil {
			return head, nil, in.err
		}
		head = jsonHead{}
	}
	return head, io.MultiReader(&read, br), nil
}

// readWindows reads the rows of a samples file, or those of a recording's
// windows: a samples file starts with its CSV header or with '{'.
func readWindows(r io.Reader) ([]output.SampleRow, error) {
	isIOReport, r, err := source.SniffIOReportRecording(r)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(r)
	head, _ := br.Peek(len(output.SamplesHeader[0]) + 1)
	head = bytes.TrimLeft(head, " \t\r\n")
	if !isIOReport && (bytes.HasPrefix(head, []byte("{")) || bytes.HasPrefix(head, []byte(output.SamplesHeader[0]+","))) {
		return output.ReadSamples(newBounded(br))
	}
	var windows output.WindowLog
	res, err := source.Recording(br, windows.Add)
	if err != nil {
		return nil, err
	}
	return windows.Rows(res), nil
}

// PowerOf is what the plot shows of rows: the span runs from 0 to the end
// of the last row's part inside it, and its energy is the rows' sum, at
// the wall too where the rows have it (run --wall). The
// title names the command the rows measured, or where they name none (a
// recording's), the input's name; the caption names their Mac and source.
func PowerOf(name string, rows []output.SampleRow) Power {
	p := Power{Title: "exopower plot: " + name, Origin: "the recording's start"}
	if len(rows) > 0 {
		if cmd := rows[0].Command; cmd != nil {
			p.Title, p.Origin = "exopower run -- "+output.ShellQuote(cmd), "the command's start"
		}
		p.Caption = caption(rows[0].Source)
	}
	var wallJoules float64
	atWall := false
	for _, r := range rows {
		w := Window{Start: float64(r.StartSeconds), End: float64(r.EndSeconds), Power: r.PowerWatts.Values(), Has: r.PowerWatts.Has()}
		if r.Wall != nil {
			atWall = true
			if r.Wall.PowerWatts != nil {
				w.Wall, w.HasWall = float64(*r.Wall.PowerWatts), true
			}
			if r.Wall.EnergyJoules != nil {
				wallJoules += float64(*r.Wall.EnergyJoules)
			}
		}
		p.Windows = append(p.Windows, w)
		p.Energy = p.Energy.Add(r.EnergyJoules.Values())
	}
	if atWall {
		// The rows' sum, as the Mac's energy is: the picture of a
		// samples file is the picture run --plot drew.
		p.WallEnergy = &wallJoules
	}
	if len(rows) > 0 {
		last := rows[len(rows)-1]
		p.SpanEnd = max(0, float64(last.StartSeconds)) + float64(last.InsideSeconds)
	}
	if p.SpanEnd > 0 {
		p.Average = p.Energy.Scale(1 / p.SpanEnd)
	}
	return p
}
