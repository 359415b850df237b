package powermetrics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"howett.net/plist"

	"github.com/exopower/exopower/internal/power"
)

// MaxDocumentSize is the largest document the Decoder accepts, in bytes,
// however its bytes arrive. Real documents run from 12 KB to about 230 KB;
// a 64 KiB token limit has broken other tools on large machines, so the
// bound sits far above any of them.
const MaxDocumentSize = 16 << 20

// MaxNesting is how deep the elements of a document may nest, the plist
// element and its top dict included, before the full decoder reads it. The
// plist package parses recursively, and a document nested a few hundred
// thousand levels deep overflows the goroutine's stack, which ends the
// process: no recover catches it. powermetrics nests about 10 levels and
// the fast path follows 68, so 128 refuses only documents built to harm.
const MaxNesting = 128

// MaxWindow bounds elapsed_ns. A window can be long when the Mac slept, but
// a week-long window is a broken document.
const MaxWindow = power.MaxWindow

const readChunk = 64 << 10

var (
	endTag = []byte("</plist>")
	// xmlName is in the declaration, "<?xml ", that begins every
	// document: found after a document's first byte, it begins another.
	xmlName = []byte("?xml")
)

// Decoder reads a powermetrics -f plist stream and yields one Sample per
// document, as soon as the document's </plist> arrives: waiting for the
// NUL that precedes the next document would make every sample one interval
// late.
type Decoder struct {
	r       io.Reader
	now     func() time.Time
	limit   int // MaxDocumentSize, but for tests
	buf     []byte
	off     int // start of unread data in buf
	scanned int // bytes after off already searched for endTag
	gap     int // NUL and white space passed over since the last document
	index   int // index of the next document
	arrival time.Time
	err     error // the reader's error, once it has returned one
	fatal   error // a stream error after which nothing more can be read
}

// NewDecoder returns a Decoder reading r. now stamps each document's
// arrival; pass a monotonic clock (time.Now is one).
func NewDecoder(r io.Reader, now func() time.Time) *Decoder {
	return &Decoder{r: r, now: now, limit: MaxDocumentSize}
}

// Next returns the next sample. A refused document comes back as a
// *DocumentError, after which Next goes on with the following document,
// except for ErrTooLarge, which ends the stream. A document cut short
// (ErrTruncated) is one that another document follows before its
// </plist>, or that the stream ends in; after the last, Next returns
// io.EOF.
func (d *Decoder) Next() (power.Sample, error) {
	for d.fatal == nil {
		doc, err := d.nextDocument()
		switch {
		case err != nil:
			return power.Sample{}, err
		case doc != nil:
			i := d.index - 1 // take has counted it
			s, err := Parse(doc)
			if err != nil {
				return power.Sample{}, &DocumentError{Index: i, Err: err}
			}
			s.Index, s.Arrival = i, d.arrival
			return s, nil
		case d.err != nil:
			d.fatal = d.err
		default:
			d.fill()
		}
	}
	return power.Sample{}, d.fatal
}

// nextDocument returns the next whole document in the buffer, or the
// error for the bytes before it, or neither when it needs more bytes.
// It decides only when it has read the document's </plist>, or
// MaxDocumentSize and a tag more, or the stream's end: so the same bytes
// give the same answer however the reads cut them.
func (d *Decoder) nextDocument() ([]byte, error) {
	d.skipSeparators()
	if d.gap > d.limit {
		// The bytes between documents count against the limit too: a
		// stream of NULs (/dev/zero) would be read for ever.
		d.fatal = &DocumentError{Index: d.index, Err: fmt.Errorf("%w: nothing but NUL bytes and white space in its first %d bytes", ErrTooLarge, d.limit)}
		d.buf, d.off = nil, 0
		return nil, d.fatal
	}
	pending := d.buf[d.off:]
	if len(pending) == 0 {
		return nil, nil
	}
	from := max(0, d.scanned-len(endTag)+1)
	if i := indexEndTag(pending[from:]); i >= 0 {
		return d.take(from+i+len(endTag), true)
	}
	d.scanned = len(pending)
	if d.err == nil && len(pending) < d.limit+len(endTag) {
		return nil, nil
	}
	return d.take(len(pending), false)
}

// take passes over the next n bytes, a document that ends in </plist>
// when whole is true, and returns them as a document or the error that
// refuses them. Another document's start inside them means this one was
// cut short: it alone is lost, and the next is read from its start.
func (d *Decoder) take(n int, whole bool) ([]byte, error) {
	part, i := d.buf[d.off:d.off+n], d.index
	if cut := indexStart(part); cut > 0 && cut <= d.limit {
		d.off, d.scanned, d.index, d.gap = d.off+cut, 0, i+1, 0
		return nil, &DocumentError{Index: i, Err: cutShort(part[:cut], false)}
	}
	if len(part) > d.limit {
		d.fatal = &DocumentError{Index: i, Err: ErrTooLarge}
		d.buf, d.off = nil, 0
		return nil, d.fatal
	}
	d.off, d.scanned, d.index, d.gap = d.off+n, 0, i+1, 0
	if !whole {
		d.fatal = d.err
		d.buf, d.off = nil, 0
		return nil, &DocumentError{Index: i, Err: cutShort(part, true)}
	}
	return part, nil
}

// cutShort is the error for part, bytes that ended before a </plist>, at
// the end of the stream or where another document began. A document cut
// short starts like one, with a <; anything else, such as a file that is
// no recording, is not one.
func cutShort(part []byte, atEnd bool) error {
	switch {
	case part[0] != '<' && atEnd:
		return fmt.Errorf("%w: the stream ends with %d bytes that are not a plist document", ErrMalformed, len(part))
	case part[0] != '<':
		return fmt.Errorf("%w: %d bytes that are not a plist document before the next document", ErrMalformed, len(part))
	case atEnd:
		return fmt.Errorf("%w: the stream ended before its </plist>", ErrTruncated)
	}
	return fmt.Errorf("%w: another document began before its </plist> (powermetrics restarted, or two recordings were joined)", ErrTruncated)
}

// indexStart returns the index of the first XML declaration in b after its
// first byte, where another document starts, or -1. It looks for "?xml",
// whose '?' is rare in a document, and then for the '<' before it and the
// white space after it.
func indexStart(b []byte) int {
	for off := 2; off < len(b); {
		j := bytes.Index(b[off:], xmlName)
		if j < 0 {
			return -1
		}
		k := off + j
		if b[k-1] == '<' && k+len(xmlName) < len(b) && isSpace(b[k+len(xmlName)]) {
			return k - 1
		}
		off = k + 1
	}
	return -1
}

// indexEndTag returns the index of the first </plist> in b, or -1. It
// looks for "plist>" and then for the "</" before it: a document has a '<'
// in every tag, thousands of them, but a 'p' only a few dozen times, and
// the search runs over every byte that powermetrics writes.
func indexEndTag(b []byte) int {
	for off := 0; ; {
		j := bytes.Index(b[off:], endTag[2:])
		if j < 0 {
			return -1
		}
		k := off + j
		if k >= 2 && b[k-2] == '<' && b[k-1] == '/' {
			return k - 2
		}
		off = k + 1
	}
}

// skipSeparators passes over the NUL and the white space between documents.
func (d *Decoder) skipSeparators() {
	for d.off < len(d.buf) {
		switch d.buf[d.off] {
		case 0, ' ', '\t', '\r', '\n':
			d.off++
			d.gap++
			if d.scanned > 0 {
				d.scanned--
			}
		default:
			return
		}
	}
}

// fill reads more of the stream, never more than the document being read
// needs to reach MaxDocumentSize and a </plist>: a file's reads fill all
// the room they are given, and a limit checked only between reads would
// hold for pipes alone.
func (d *Decoder) fill() {
	if d.off > 0 && d.off >= len(d.buf)/2 {
		// The document returned last may still be in use by its caller's
		// Parse, which has finished by now: moving the rest down is safe.
		n := copy(d.buf, d.buf[d.off:])
		d.buf, d.off = d.buf[:n], 0
	}
	most := d.limit + len(endTag)
	room := most - (len(d.buf) - d.off)
	if cap(d.buf)-len(d.buf) < min(room, readChunk) {
		nb := make([]byte, len(d.buf)-d.off, min(2*cap(d.buf)+readChunk, most))
		copy(nb, d.buf[d.off:])
		d.buf, d.off = nb, 0
	}
	end := min(cap(d.buf), len(d.buf)+room)
	n, err := d.r.Read(d.buf[len(d.buf):end])
	if n > 0 {
		d.arrival = d.now()
	}
	d.buf = d.buf[:len(d.buf)+n]
	if err != nil {
		d.err = err
	}
}

// number takes a plist <integer> or <real>: powermetrics writes energies
// as integers and powers as reals, and a decoder that insists on one type
// breaks when a release changes it.
type number float64

func (n *number) UnmarshalPlist(unmarshal func(any) error) error {
	var v any
	if err := unmarshal(&v); err != nil {
		return err
	}
	switch v := v.(type) {
	case int64:
		*n = number(v)
	case uint64:
		*n = number(v)
	case float64:
		*n = number(v)
	case float32:
		*n = number(v)
	default:
		return fmt.Errorf("want a number, have %T", v)
	}
	return nil
}

// document holds the few keys exopower uses; the decoder skips the rest.
type document struct {
	IsDelta         *bool      `plist:"is_delta"`
	ElapsedNS       *number    `plist:"elapsed_ns"`
	HWModel         string     `plist:"hw_model"`
	KernOSVersion   string     `plist:"kern_osversion"`
	Timestamp       time.Time  `plist:"timestamp"`
	Processor       *processor `plist:"processor"`
	ThermalPressure string     `plist:"thermal_pressure"`
	GPU             *gpuDict   `plist:"gpu"`
}

type gpuDict struct {
	GPUEnergy *number `plist:"gpu_energy"`
}

type processor struct {
	CPUEnergy     *number `plist:"cpu_energy"`
	CPUPower      *number `plist:"cpu_power"`
	GPUEnergy     *number `plist:"gpu_energy"`
	GPUPower      *number `plist:"gpu_power"`
	ANEEnergy     *number `plist:"ane_energy"`
	ANEPower      *number `plist:"ane_power"`
	CombinedPower *number `plist:"combined_power"`
	PackageWatts  *number `plist:"package_watts"`
	PackageJoules *number `plist:"package_joules"`
}

// Parse decodes one powermetrics document. Its Index and Arrival are left
// zero for the caller to fill in. A document in the shape powermetrics
// writes takes the fast path (fast.go); any other goes through the full
// plist decoder, which yields the same values, only slower.
func Parse(doc []byte) (power.Sample, error) {
	var d document
	if !fastParse(doc, &d) {
		return ParseFull(doc)
	}
	return d.sample()
}

// ParseFull decodes one document with the full plist decoder, building
// all of it: the reference the fast path is held to.
func ParseFull(doc []byte) (power.Sample, error) {
	var d document
	if err := unmarshal(doc, &d); err != nil {
		return power.Sample{}, err
	}
	return d.sample()
}

func unmarshal(doc []byte, d *document) (err error) {
	if err := checkMarkup(doc); err != nil {
		return err
	}
	// The plist package re-raises runtime panics; a stream of garbage must
	// cost one document, never the measurement.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrMalformed, r)
		}
	}()
	dec := plist.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(d); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	// The plist package falls back to the OpenStep text format when XML
	// fails to parse, which would take garbage for a string.
	if dec.Format != plist.XMLFormat {
		return fmt.Errorf("%w: not an XML property list", ErrMalformed)
	}
	return nil
}

func (d *document) sample() (power.Sample, error) {
	window, err := d.window()
	if err != nil {
		return power.Sample{}, err
	}
	s := power.Sample{
		Window:          window,
		HWModel:         d.HWModel,
		OSBuild:         d.KernOSVersion,
		Timestamp:       d.Timestamp,
		ThermalPressure: d.ThermalPressure,
	}
	p := d.Processor
	if p == nil {
		p = &processor{}
	}
	if p.CPUPower == nil && p.CPUEnergy == nil && (p.PackageWatts != nil || p.PackageJoules != nil) {
		return power.Sample{}, ErrIntel
	}
	gpuEnergy := p.GPUEnergy
	if p.GPUPower == nil && gpuEnergy == nil && d.GPU != nil {
		// A gpu_power-only stream has no processor dict: the gpu dict
		// carries the energy.
		gpuEnergy = d.GPU.GPUEnergy
	}
	// Each rail is held to what this Mac can draw.
	b := power.BoundsOf(d.HWModel)
	if s.Power.CPU, s.Energy.CPU, s.Has.CPU, err = component(power.CPU, p.CPUPower, p.CPUEnergy, window, b); err != nil {
		return power.Sample{}, err
	}
	if s.Power.GPU, s.Energy.GPU, s.Has.GPU, err = component(power.GPU, p.GPUPower, gpuEnergy, window, b); err != nil {
		return power.Sample{}, err
	}
	if s.Power.ANE, s.Energy.ANE, s.Has.ANE, err = component(power.ANE, p.ANEPower, p.ANEEnergy, window, b); err != nil {
		return power.Sample{}, err
	}
	if !s.Has.CPU && !s.Has.GPU && !s.Has.ANE {
		return power.Sample{}, ErrNoPowerData
	}
	s.Power, s.Energy = s.Power.Summed(), s.Energy.Summed()
	if s.Power.Total > b.SoC {
		// Each part within its bound, the SoC's together beyond its own.
		most := power.CPU
		for _, r := range []power.Rail{power.GPU, power.ANE} {
			if s.Power.Of(r) > s.Power.Of(most) {
				most = r
			}
		}
		return power.Sample{}, &power.ImplausibleError{Rail: most, Total: true, Watts: s.Power.Total, Window: window, Bounds: b}
	}
	if s.CombinedPower, s.CombinedDisagrees, err = combinedPower(s.Power, p.CombinedPower, window, b); err != nil {
		return power.Sample{}, err
	}
	return s, nil
}

// window reads the document's window from elapsed_ns, which every power
// and energy is an average or a total over.
func (d *document) window() (time.Duration, error) {
	if d.IsDelta != nil && !*d.IsDelta {
		return 0, errors.New("not a delta sample (--show-initial-usage covers the time since boot)")
	}
	if d.ElapsedNS == nil {
		return 0, fmt.Errorf("%w: no elapsed_ns", ErrMalformed)
	}
	ns := float64(*d.ElapsedNS)
	if !(ns > 0) || ns > float64(MaxWindow) {
		return 0, fmt.Errorf("%w: elapsed_ns %g is not in (0, %d]", ErrImplausible, ns, int64(MaxWindow))
	}
	return time.Duration(ns), nil
}

// component reads one component's power (mW) and energy (mJ) into watts
// and joules over window; has is false when the document has neither. A
// power beyond what the Mac can draw (b) is a *power.ImplausibleError.
func component(rail power.Rail, pw, energy *number, window time.Duration, b power.Bounds) (watts, joules float64, has bool, err error) {
	if pw == nil && energy == nil {
		return 0, 0, false, nil
	}
	name := rail.Label()
	secs := window.Seconds()
	if energy != nil {
		joules = float64(*energy) / 1000
		if !plausible(joules/secs, b.Of(rail)) {
			return 0, 0, false, &power.ImplausibleError{Rail: rail, Watts: joules / secs, Window: window, Bounds: b,
				Detail: fmt.Sprintf("%s_energy %g mJ", name, float64(*energy))}
		}
	}
	switch {
	case pw == nil:
		watts = joules / secs
	case energy != nil && consistent(float64(*pw)/1000, joules/secs):
		// powermetrics derives the power from the whole millijoules
		// and writes it with six digits: the energy is the same
		// number, to more digits. Where they differ by more, the
		// power's window was not elapsed_ns (the tasks sampler
		// shortens it), and the power is the better average.
		watts = joules / secs
	default:
		watts = float64(*pw) / 1000
	}
	if !plausible(watts, b.Of(rail)) {
		return 0, 0, false, &power.ImplausibleError{Rail: rail, Watts: watts, Window: window, Bounds: b,
			Detail: fmt.Sprintf("%s_power %g mW", name, watts*1000)}
	}
	if energy == nil {
		joules = watts * secs
	}
	return watts, joules, true, nil
}

// combinedPower reads combined_power (mW) into watts, where the document
// has it, and reports whether it disagrees with the sum of v's components.
// The total is that sum, what users add up from the components shown:
// combined_power only checks it.
func combinedPower(v power.Values, combined *number, window time.Duration, b power.Bounds) (watts float64, disagrees bool, err error) {
	if combined == nil {
		return 0, false, nil
	}
	watts = float64(*combined) / 1000
	if !plausible(watts, b.SoC) {
		return 0, false, &power.ImplausibleError{Rail: -1, Total: true, Watts: watts, Window: window, Bounds: b,
			Detail: fmt.Sprintf("combined_power %g mW", float64(*combined))}
	}
	// combined_power and each component's power are written with six
	// significant digits, and a component taken from its energy is the
	// written power to more digits: each may be off by half its last digit.
	slack := 5e-6*(watts+v.CPU+v.GPU+v.ANE) + 1e-12
	return watts, math.Abs(watts-v.Total) > slack, nil
}

// plausible says whether w watts can be a rail's whose bound is most.
func plausible(w, most float64) bool { return w >= 0 && w <= most }

// consistent reports whether written, a power printed with six significant
// digits, is exact rounded to them.
func consistent(written, exact float64) bool {
	return math.Abs(written-exact) <= 5e-6*math.Abs(exact)+1e-12
}
