// Package powermetrics runs Apple's powermetrics and decodes its stream.
//
// powermetrics -f plist writes one XML property list per sample window,
// each after the first preceded by a NUL byte. The Decoder reads that
// stream from any io.Reader and yields one typed Sample per document as
// soon as its closing </plist> arrives, stamped with the monotonic time of
// its arrival. Start runs powermetrics itself with the flags exopower
// needs. Nothing here reads the environment or writes to the terminal:
// the caller decides what to do with samples and errors.
package powermetrics

import (
	"errors"
	"fmt"

	"github.com/exopower/exopower/internal/power"
)

// Errors a document can be refused with, wrapped in a *DocumentError.
var (
	// ErrNoPowerData: the document has no cpu_power or gpu_power data,
	// as inside a virtual machine or with other samplers.
	ErrNoPowerData = errors.New("no CPU, GPU or ANE power data (samplers cpu_power and gpu_power did not run, or this is a virtual machine)")
	// ErrIntel: the document is in an Intel Mac's format (package_watts).
	ErrIntel = errors.New("an Intel Mac's format (processor.package_watts): exopower measures Apple Silicon only")
	// ErrTruncated: the document was cut short before its </plist>: the
	// stream ended, or another document began (powermetrics restarted,
	// or two recordings were joined).
	ErrTruncated = errors.New("truncated")
	// ErrTooLarge: the document is longer than MaxDocumentSize, however
	// its bytes arrived. powermetrics writes a few hundred KB at most.
	ErrTooLarge = fmt.Errorf("larger than %d MiB, where powermetrics writes at most a few hundred KB: not a powermetrics document", MaxDocumentSize>>20)
	// ErrMalformed: the document is not a well-formed XML property list.
	ErrMalformed = errors.New("malformed plist")
	// ErrTooDeep: the document's elements nest deeper than MaxNesting.
	ErrTooDeep = fmt.Errorf("%w: nested more than %d levels deep, where powermetrics nests about 10", ErrMalformed, MaxNesting)
	// ErrImplausible: a value is negative, not a number, or beyond
	// what the Mac can draw (a *power.ImplausibleError names the rail).
	ErrImplausible = power.ErrImplausible
)

// EndsStream reports whether an error from a Decoder's Next ends the
// stream: anything but a refused document or a break (a powermetrics
// started again), and a document too large to find the end of. After a
// refused document or a break the stream goes on.
func EndsStream(err error) bool { return power.EndsStream(err) }

// DocumentError says which document of a stream was refused and why.
type DocumentError struct {
	Index int
	Err   error
}

func (e *DocumentError) Error() string { return fmt.Sprintf("document %d: %v", e.Index, e.Err) }
func (e *DocumentError) Unwrap() error { return e.Err }

// reasons name the refusals in a word each, for counting, in the order
// they are told apart (ErrTooDeep is ErrMalformed too).
var reasons = []struct {
	err  error
	name string
}{
	{ErrTruncated, "truncated"},
	{ErrTooLarge, "too_large"},
	{ErrImplausible, "implausible"},
	{ErrNoPowerData, "no_power_data"},
	{ErrMalformed, "malformed"},
}

// Reasons are every word Reason can say, "other" last.
func Reasons() []string {
	var names []string
	for _, r := range reasons {
		names = append(names, r.name)
	}
	return append(names, "other")
}

// Reason names why the document was refused, in a word, for counting.
func (e *DocumentError) Reason() string {
	for _, r := range reasons {
		if errors.Is(e.Err, r.err) {
			return r.name
		}
	}
	return "other"
}

// Ends says that the stream cannot go on: a document too large to find
// the end of.
func (e *DocumentError) Ends() bool { return errors.Is(e.Err, ErrTooLarge) }

// Unmeasurable says that the document has no power data, or is an Intel
// Mac's: a stream that starts so has nothing exopower can measure.
func (e *DocumentError) Unmeasurable() bool {
	return errors.Is(e.Err, ErrNoPowerData) || errors.Is(e.Err, ErrIntel)
}

// Cut says that the document was cut short before its </plist>.
func (e *DocumentError) Cut() bool { return errors.Is(e.Err, ErrTruncated) }
