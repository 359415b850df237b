// Package wire holds the JSON that exopower writes and reads, one Go type
// per message: the summary of a span (run, report, the end of watch, a
// node's span), the lines of watch --json, and serve's API (status, an
// opened span, a span's reading, a stream line, an error), which the
// server, the cluster's client and doctor all use. The JSON reference
// (docs/json.md, docs/json/) shows an example and a table of the fields
// of each, and the tests hold both to these types.
//
// JSON is snake_case with units in the names; fields may be added within
// a schema version, never renamed or removed. Building these from a
// measurement is output's (and serve's); this package only says what
// goes on the wire.
package wire

import (
	"fmt"
	"math"
	"strconv"

	"github.com/exopower/exopower/internal/power"
)

// SchemaVersion is the version of the JSON output. Fields may be added
// within a version; none is renamed or removed.
const SchemaVersion = 1

// Scope is what powermetrics measures, as the JSON names it: the SoC's
// CPU, GPU and ANE.
const Scope = "soc"

// Summary is the JSON result of a measured span. A run's summary is one
// of these; repeated runs or several machines would come as arrays of the
// same objects under new keys ("runs", "nodes"), with nothing renamed.
type Summary struct {
	SchemaVersion int `json:"schema_version"`
	// Type is "summary", which tells it apart from the "sample" lines of
	// exopower watch --json.
	Type    string   `json:"type"`
	Command []string `json:"command"`
	// ExitCode is the status exopower exits with for the command: its
	// own, or 128+N when signal N ended it. Null when no command ran.
	ExitCode *int `json:"exit_code"`
	// Signal is the name of the signal that ended the command, or null.
	Signal *string `json:"signal"`
	// StartedAt is the wall-clock start of the span, RFC 3339 with
	// nanoseconds, UTC.
	StartedAt       string     `json:"started_at"`
	DurationSeconds Num        `json:"duration_seconds"`
	IntervalSeconds Num        `json:"interval_seconds"`
	Samples         int        `json:"samples"`
	Coverage        Num        `json:"coverage"`
	Scope           string     `json:"scope"`
	Source          Source     `json:"source"`
	EnergyJoules    Components `json:"energy_joules"`
	AvgPowerWatts   Components `json:"avg_power_watts"`
	// MeasuredAvgPowerWatts is the average power over the time that
	// windows covered (MeasuredAverage): what the Mac drew while it was
	// measured, where AvgPowerWatts spreads the energy over the whole
	// span. The same at coverage 1; null when nothing was measured.
	MeasuredAvgPowerWatts *Components `json:"measured_avg_power_watts"`
	PeakPowerWatts        Components  `json:"peak_power_watts"`
	// Rails is what exopower refused to believe of each rail over the
	// span, so that a rail going bad shows where it can be counted.
	Rails    Rails    `json:"rails"`
	Warnings []string `json:"warnings"`

	// Nodes, in a run over several Macs (--node), are each node's own
	// measurement of the span; the fields above are then the cluster's:
	// energy summed over the nodes, average power that sum over the
	// command's elapsed time, coverage the lowest node's, peak the sum of
	// the nodes' peaks (a bound: they need not come at once).
	Nodes []NodeSummary `json:"nodes,omitempty"`
	// UncertaintyJoules bounds the cluster's energy error that comes from
	// not knowing each node's span edges better than its round trip.
	UncertaintyJoules *Num `json:"uncertainty_joules,omitempty"`

	// Attribution is the command's own process tree's energy (run
	// --attribute); absent otherwise.
	Attribution *Attribution `json:"attribution,omitempty"`
	// App is one app's energy over the span (run --app, a span's
	// ?app=); absent otherwise.
	App *App `json:"app,omitempty"`

	// Wall is the energy at the wall over the span, as a metered plug
	// measured it (--wall); null where nothing reads it.
	Wall *Wall `json:"wall"`
	// WallEstimated is the energy at the wall estimated from this Mac's
	// calibration (exopower calibrate) where no plug is read: not a
	// measurement. Null where there is no calibration of this Mac, or a
	// plug is read.
	WallEstimated *WallEstimated `json:"wall_estimated"`
	// Cost is the span's energy priced at --price, and CO2e the CO2e it
	// stands for at --carbon-intensity or --grid (internal/cost's rule
	// says which energy); each null where its figure was not given, and
	// in a node's span and serve's.
	Cost *Cost `json:"cost"`
	CO2e *CO2e `json:"co2e"`

	// Title heads the text summary when there is no command, after
	// "exopower ": "watch", "report: FILE". It is not part of the JSON.
	Title string `json:"-"`
}

// Wall is the energy at the wall over a span, as a metered plug
// measured it: the Mac and whatever else is plugged in, its adapter's
// loss included.
type Wall struct {
	// EnergyJoules is the span's energy; UncertaintyJoules bounds its
	// error from the plug's resolution and the readings at the span's
	// edges (not the plug's own calibration, 1 to 2 % for most).
	EnergyJoules      Num `json:"energy_joules"`
	UncertaintyJoules Num `json:"uncertainty_joules"`
	// AvgPowerWatts is the energy over the span's duration.
	AvgPowerWatts Num `json:"avg_power_watts"`
	// Method is "counter" where the plug's own energy counter gave the
	// energy (its difference, exact to one count, the edges from the
	// power readings), "power" where its power readings alone did (a
	// span too short for the counter).
	Method string `json:"method"`
	// Coverage is the part of the span that the plug's readings cover.
	Coverage Num `json:"coverage"`
	// Polls is how many readings fell in the span; Resets how many
	// times the plug's counter went back (a reboot).
	Polls  int        `json:"polls"`
	Resets int        `json:"resets"`
	Source WallSource `json:"source"`
}

// WallEstimated is the energy at the wall over a span estimated from
// this Mac's calibration: the fit's line of the Mac's average power, held
// over the span. Not a measurement: what the calibration did not hold
// (another display brightness, a charging battery, another device on the
// plug) is not in it.
type WallEstimated struct {
	// EnergyJoules is the estimate; UncertaintyJoules the fit's RMS
	// times the span's duration: the typical error, not a bound.
	EnergyJoules      Num `json:"energy_joules"`
	UncertaintyJoules Num `json:"uncertainty_joules"`
	AvgPowerWatts     Num `json:"avg_power_watts"`
	// From is "system" where the fit maps the SMC's system power, "soc"
	// where it maps the SoC's.
	From string `json:"from"`
	// Extrapolated says the Mac's power over the span was outside the
	// range the calibration's steps covered.
	Extrapolated bool            `json:"extrapolated"`
	Calibration  WallCalibration `json:"calibration"`
}

// WallCalibration is the fit an estimate came from: wall = intercept +
// slope × the Mac's power, over the calibration's steps.
type WallCalibration struct {
	// CalibratedAt is when the calibration ended, RFC 3339, UTC.
	CalibratedAt     string `json:"calibrated_at"`
	InterceptWatts   Num    `json:"intercept_watts"`
	Slope            Num    `json:"slope"`
	RMSWatts         Num    `json:"rms_watts"`
	MaxResidualWatts Num    `json:"max_residual_watts"`
	RSquared         Num    `json:"r_squared"`
	// MinWatts and MaxWatts are the range of the Mac's power the steps
	// covered.
	MinWatts Num `json:"min_watts"`
	MaxWatts Num `json:"max_watts"`
	Steps    int `json:"steps"`
	// PlugKind and PlugModel are the plug it was made with.
	PlugKind  string `json:"plug_kind"`
	PlugModel string `json:"plug_model"`
}

// WallSource is the plug a wall figure came from.
type WallSource struct {
	// Kind is shelly-gen2, shelly-gen1, tasmota, home-assistant or kasa.
	Kind string `json:"kind"`
	// Model, Firmware and Name are as the plug gave them ("" when it
	// did not); Address is its URL, never with credentials.
	Model    string `json:"model"`
	Firmware string `json:"firmware"`
	Name     string `json:"name"`
	Address  string `json:"address"`
	// CounterResolutionJoules is one count of the plug's energy counter;
	// null where it has none.
	CounterResolutionJoules *Num `json:"counter_resolution_joules"`
	// IntervalSeconds is how often the plug was read.
	IntervalSeconds Num `json:"interval_seconds"`
}

// MeasuredAverage is the average power, in watts, over the time of the
// span that windows covered: energy / (duration × coverage). At coverage
// 1 it is AvgPowerWatts; nil when nothing was measured. Time that no
// window covered holds no energy (none is invented for it), so energy
// over the whole duration, AvgPowerWatts, understates the power by the
// coverage: at 18.6 % a Mac drawing 16.5 W averages 3.1 W.
func (s *Summary) MeasuredAverage() *Components {
	if s.Coverage >= 1 {
		c := s.AvgPowerWatts
		return &c
	}
	covered := float64(s.DurationSeconds) * float64(s.Coverage)
	if !(covered > 0) {
		return nil
	}
	c := NewComponents(s.EnergyJoules.Values().Scale(1/covered), s.EnergyJoules.Has())
	return &c
}

// NodeSummary is one node's measurement of a span, in the fields of a
// Summary, with the node's name and address and its own clock's reading
// of the span's edges.
type NodeSummary struct {
	*Summary
	// Node is the node's name for itself, as its serve gives it (this
	// Mac's hostname for "local"); two nodes may give the same.
	Node string `json:"node"`
	// Label names the node apart from every other of the run: its name,
	// or, when another node's name is the same (but for case and a
	// ".local"), its name and address, "mac1 (10.0.0.5:10241)".
	Label string `json:"label"`
	// URL is the node's exopower serve, or "local" for this Mac.
	URL string `json:"url"`
	// EndedAt is the end of the span by the node's clock (StartedAt its
	// start).
	EndedAt string `json:"ended_at"`
	// RoundTripSeconds is the longest round trip of a request to the
	// node: each edge of its span is known to within it.
	RoundTripSeconds Num `json:"round_trip_seconds"`
	// ClockOffsetSeconds is how far the node's clock is ahead of this
	// Mac's, as far as a round trip tells.
	ClockOffsetSeconds Num `json:"clock_offset_seconds"`
	// Lost is true when the node stopped answering: the fields hold what
	// it had measured by its last answer.
	Lost bool `json:"lost"`
}

// Rails holds each rail's health: one RailHealth per rail, as the JSON
// names them.
type Rails struct {
	CPU    RailHealth `json:"cpu"`
	GPU    RailHealth `json:"gpu"`
	ANE    RailHealth `json:"ane"`
	DRAM   RailHealth `json:"dram"`
	System RailHealth `json:"system"`
}

// RailHealth is what exopower refused to believe of one rail.
type RailHealth struct {
	// RefusedWindows counts the windows refused because the rail's power
	// in them could not be true (beyond what the Mac can draw).
	RefusedWindows int `json:"refused_windows"`
	// Glitches counts the readings of the rail dropped as bogus (a lone
	// 0, a step and back), the energy across each taken from the
	// readings on either side.
	Glitches int `json:"glitches"`
	// StillSeconds is the longest the rail's counter stood still while
	// the others moved (the CPU's and the memory's only: the GPU and the
	// ANE stand still when idle).
	StillSeconds Num `json:"still_seconds"`
}

// NewRails takes the rails' health of h.
func NewRails(h power.Health) Rails {
	var r [power.NumRails]RailHealth
	for i, x := range h {
		r[i] = RailHealth{RefusedWindows: x.Refused, Glitches: x.Glitches, StillSeconds: Num(x.Stood.Seconds())}
	}
	return Rails{CPU: r[power.CPU], GPU: r[power.GPU], ANE: r[power.ANE], DRAM: r[power.DRAM], System: r[power.System]}
}

// List is the rails' health in power.Rail order.
func (r *Rails) List() []*RailHealth {
	return []*RailHealth{&r.CPU, &r.GPU, &r.ANE, &r.DRAM, &r.System}
}

// Add adds o's counts to r, and keeps the longer stillness of each rail.
func (r *Rails) Add(o Rails) {
	mine, theirs := r.List(), o.List()
	for i := range mine {
		mine[i].RefusedWindows += theirs[i].RefusedWindows
		mine[i].Glitches += theirs[i].Glitches
		mine[i].StillSeconds = max(mine[i].StillSeconds, theirs[i].StillSeconds)
	}
}

// Source says where the numbers come from.
type Source struct {
	Tool    string `json:"tool"`
	HWModel string `json:"hw_model"`
	OSBuild string `json:"os_build"`
}

// Components holds one number per part of the SoC and their total, and
// the memory's and the whole system's where the source reports them: in
// joules or watts, as the field that holds it says.
type Components struct {
	// Total is CPU + GPU + ANE: the SoC's (scope "soc").
	Total Num `json:"total"`
	CPU   Num `json:"cpu"`
	GPU   Num `json:"gpu"`
	ANE   Num `json:"ane"`
	// DRAM is the memory's; null where the source does not report it
	// (powermetrics).
	DRAM *Num `json:"dram"`
	// System is the whole machine's as the SMC reports it (the SoC,
	// memory, display, storage and the rest; not part of Total); null
	// where there is no SMC to read (powermetrics, a virtual machine).
	System *Num `json:"system"`
}

// NewComponents takes the components of v, in v's unit; DRAM and System
// only where has says the source reported them.
func NewComponents(v power.Values, has power.Reported) Components {
	c := Components{Total: Num(v.Total), CPU: Num(v.CPU), GPU: Num(v.GPU), ANE: Num(v.ANE)}
	if has.DRAM {
		c.DRAM = ptr(Num(v.DRAM))
	}
	if has.System {
		c.System = ptr(Num(v.System))
	}
	return c
}

func ptr(n Num) *Num { return &n }

// Values is c as values to compute with, DRAM and System 0 where they are
// null: sums of components are made there (power.Values.Add), in one
// place.
func (c Components) Values() power.Values {
	v := power.Values{CPU: float64(c.CPU), GPU: float64(c.GPU), ANE: float64(c.ANE), Total: float64(c.Total)}
	if c.DRAM != nil {
		v.DRAM = float64(*c.DRAM)
	}
	if c.System != nil {
		v.System = float64(*c.System)
	}
	return v
}

// Has says which of DRAM and System c holds, and CPU, GPU and ANE.
func (c Components) Has() power.Reported {
	return power.Reported{CPU: true, GPU: true, ANE: true, DRAM: c.DRAM != nil, System: c.System != nil}
}

// Num is a float written as JSON with at most 12 significant digits:
// powermetrics writes six, and 17.6894 W reads better than
// 17.689400000000003 W, the float nearest 17689.4 mW / 1000.
type Num float64

// MarshalJSON writes n in plain decimal, or with an exponent when it is
// below 1e-6 or from 1e21 up. NaN and infinities are an error: JSON has
// no way to write them.
func (n Num) MarshalJSON() ([]byte, error) { return AppendNum(nil, n) }

// AppendNum appends n as MarshalJSON writes it to dst: the rows of
// --samples are written a million at a time without encoding/json.
func AppendNum(dst []byte, n Num) ([]byte, error) {
	v := float64(n)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		// n, not v: a variable that a fmt argument holds is put on the
		// heap on every call, not only on this path.
		return dst, fmt.Errorf("cannot write %v as JSON", float64(n))
	}
	// The 12 significant digits, rounded, and their exponent: d.ddddddddddde±XX.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], v, 'e', 11, 64)
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	var d [12]byte
	digits := append(d[:0], e[0])
	digits = append(digits, e[2:13]...)
	exp := 0
	for _, c := range e[15:] {
		exp = exp*10 + int(c-'0')
	}
	if e[14] == '-' {
		exp = -exp
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if digits[0] != '0' && (exp < -6 || exp >= 21) {
		// Exponent notation is rare: the float the digits name is
		// found and written as strconv writes it.
		r, _ := strconv.ParseFloat(string(e), 64)
		if neg {
			r = -r
		}
		return strconv.AppendFloat(dst, r, 'g', -1, 64), nil
	}
	// Those digits, trailing zeros gone, are the shortest decimal of the
	// float nearest them: two decimals of at most 12 digits are never as
	// near as two floats.
	return appendPlain(dst, neg, digits, exp), nil
}

// appendPlain writes the number of digits d.ddd... times 10^exp in plain
// decimal.
func appendPlain(dst []byte, neg bool, digits []byte, exp int) []byte {
	if neg {
		dst = append(dst, '-')
	}
	switch {
	case digits[0] == '0':
		return append(dst, '0')
	case exp < 0:
		dst = append(dst, "0."...)
		for range -exp - 1 {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	case len(digits) <= exp+1:
		dst = append(dst, digits...)
		for range exp + 1 - len(digits) {
			dst = append(dst, '0')
		}
		return dst
	default:
		dst = append(dst, digits[:exp+1]...)
		return append(append(dst, '.'), digits[exp+1:]...)
	}
}

// SampleLine is one line of exopower watch --json.
type SampleLine struct {
	SchemaVersion int `json:"schema_version"`
	// Type is "sample"; the last line, the summary, has "summary".
	Type string `json:"type"`
	// Time is the end of the window, RFC 3339 with nanoseconds, UTC.
	Time          string     `json:"time"`
	WindowSeconds Num        `json:"window_seconds"`
	PowerWatts    Components `json:"power_watts"`
	// EnergyJoules is cumulative since the start.
	EnergyJoules    Components `json:"energy_joules"`
	ThermalPressure string     `json:"thermal_pressure"`
	// Node names the Mac the window is of, in a watch over several Macs
	// (--node) and in exopower serve's stream; absent otherwise.
	Node string `json:"node,omitempty"`
	// Label names the node apart from the others of a watch over several
	// Macs, as NodeSummary.Label does; absent otherwise.
	Label string `json:"label,omitempty"`
	// Wall is the metered plug's part of a watch --wall; absent
	// otherwise.
	Wall *SampleWall `json:"wall,omitempty"`
}

// SampleWall is the wall in a line of watch --wall: live figures, which
// the summary at the end refines (the plug read once more after the end,
// its counter where the span holds enough of it).
type SampleWall struct {
	// PowerWatts is the plug's newest power reading; null while it has
	// not answered for 5 s and two intervals, or gives no power.
	PowerWatts *Num `json:"power_watts"`
	// EnergyJoules is the energy at the wall since the watch started, up
	// to the plug's newest reading: its counter's rises between readings,
	// else its power readings.
	EnergyJoules Num `json:"energy_joules"`
}

// DefaultListen is where exopower serve listens unless told otherwise:
// this machine only, on a port that no exporter in Prometheus's list of
// default ports takes (9100-9999 are all given out), nor Prometheus,
// its Pushgateway and Alertmanager (9090-9093), nor 8080 or 28282.
const DefaultListen = "127.0.0.1:10241"

// Status is the answer to GET /v1/status.
type Status struct {
	Node string `json:"node"`
	// InstanceID is drawn at random when serve starts, 128 bits in hex:
	// two URLs that answer the same one reach the same serve. A serve
	// older than it leaves it out, which decodes as "".
	InstanceID string `json:"instance_id"`
	// BootID is a digest of the boot session of the Mac that serve runs
	// on (32 hex digits), the same for every program on that Mac until
	// it restarts; null where the system does not say.
	BootID          *string        `json:"boot_id"`
	Source          Source         `json:"source"`
	IntervalSeconds Num            `json:"interval_seconds"`
	StartedAt       string         `json:"started_at"`
	UptimeSeconds   Num            `json:"uptime_seconds"`
	EnergyJoules    Components     `json:"energy_joules"`
	CoveredSeconds  Num            `json:"covered_seconds"`
	Samples         int            `json:"samples"`
	SampleErrors    map[string]int `json:"sample_errors"`
	Restarts        int            `json:"source_restarts"`
	RestartError    *string        `json:"source_error"`
	OpenSpans       int            `json:"open_spans"`
	OpenStreams     int            `json:"open_streams"`
	// OpenProcessSpans is how many spans that name a process (?pid=)
	// hold one of their places now, MaxProcessSpans how many places
	// there are, and MaxProcessSpansPerClient how many one client (a
	// user of the web config, or this Mac's clients without a password)
	// may hold.
	OpenProcessSpans         int         `json:"open_process_spans"`
	MaxProcessSpans          int         `json:"max_process_spans"`
	MaxProcessSpansPerClient int         `json:"max_process_spans_per_client"`
	LastWindow               *LastWindow `json:"last_window"`
	// Rails is what exopower refused to believe of each rail since serve
	// started; StillNowSeconds, how long each rail's counter has stood
	// still now while the others moved (0 while it moves), by rail.
	Rails           Rails          `json:"rails"`
	StillNowSeconds map[string]Num `json:"still_now_seconds"`
	// Wall is the metered plug that serve reads (--wall); null where it
	// reads none.
	Wall *StatusWall `json:"wall"`
	// WallEstimated is the calibration that serve estimates the wall
	// from, or why it uses none; null where it reads a plug (--wall).
	WallEstimated *StatusWallEstimated `json:"wall_estimated"`
}

// StatusWallEstimated is the calibration of this Mac that a serve
// without a plug estimates the wall from, in /v1/status.
type StatusWallEstimated struct {
	// File is where serve looks for the calibration: in the
	// configuration directory of the user who ran it (under sudo, the
	// user who ran sudo); "" where that user has none.
	File string `json:"file"`
	// Calibration is the fit in use; null where none is (Unused says
	// why).
	Calibration *WallCalibration `json:"calibration"`
	// From is "system" or "soc", the Mac's power the fit maps; "" where
	// no fit is in use.
	From string `json:"from"`
	// EnergyJoules is the wall's energy since serve started, estimated
	// over the time its windows covered (the counter
	// exopower_wall_estimated_energy_joules_total); null where no fit
	// is in use.
	EnergyJoules *Num `json:"energy_joules"`
	// Unused says why no calibration is used; null where one is.
	Unused *string `json:"unused"`
}

// StatusWall is the plug of a serve's --wall, in /v1/status.
type StatusWall struct {
	// Kind, Model, Firmware and Address are as in WallSource.
	Kind     string `json:"kind"`
	Model    string `json:"model"`
	Firmware string `json:"firmware"`
	Address  string `json:"address"`
	// EnergyJoules is the energy at the wall since serve started (the
	// exopower_wall_energy_joules_total counter), CoveredSeconds the time
	// its readings cover, Resets the times its counter went back.
	EnergyJoules   Num `json:"energy_joules"`
	CoveredSeconds Num `json:"covered_seconds"`
	Resets         int `json:"resets"`
	// PowerWatts is the newest power reading; null while the plug has
	// not answered for 5 s and two intervals, or gives no power.
	PowerWatts *Num `json:"power_watts"`
	// Polls is how many readings were asked for, PollFailures how many
	// failed, LastError the newest failure (null when none), and
	// LastReadingAt when the newest good reading was taken (null before
	// the first).
	Polls           int     `json:"polls"`
	PollFailures    int     `json:"poll_failures"`
	LastError       *string `json:"last_error"`
	LastReadingAt   *string `json:"last_reading_at"`
	IntervalSeconds Num     `json:"interval_seconds"`
}

// LastWindow is the newest window of a serve's stream.
type LastWindow struct {
	Start      string     `json:"start"`
	End        string     `json:"end"`
	PowerWatts Components `json:"power_watts"`
}

// Opened is the answer to POST /v1/spans.
type Opened struct {
	ID   string `json:"id"`
	Node string `json:"node"`
	// StartedAt is the span's start by the node's clock, RFC 3339 with
	// nanoseconds, UTC.
	StartedAt string `json:"started_at"`
	URL       string `json:"url"`
}

// Reading is a span's measurement (GET /v1/spans/ID, POST
// /v1/spans/ID/end), in the fields and units of exopower run --json, with
// the node's own reading of its edges. Its Type is "span".
type Reading struct {
	*Summary
	ID   string `json:"id"`
	Node string `json:"node"`
	Open bool   `json:"open"`
	// EndedAt is the span's end by the node's clock; null while it is
	// open.
	EndedAt *string `json:"ended_at"`
}

// Error is the body of every error serve answers with.
type Error struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
}
