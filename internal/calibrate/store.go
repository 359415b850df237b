package calibrate

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/safe"
)

// SchemaVersion is the calibration file's version: fields may be added,
// never renamed.
const SchemaVersion = 1

// FileName is the calibration's file, in exopower's folder of the
// user's configuration directory.
const FileName = "calibration.json"

// Mac names a Mac without saying which one it is to anyone who reads the
// file: its model and a digest of its serial number.
type Mac struct {
	HWModel string `json:"hw_model"`
	// SerialSHA256 is SHA-256 of "exopower calibration:" and the serial,
	// in hex. It tells this Mac from another; the serial itself is never
	// stored, nor printed.
	SerialSHA256 string `json:"serial_sha256"`
}

// Identify is the Mac of model and serial. It fails on an empty one: a
// Mac that cannot be told apart would take any Mac's fit.
func Identify(model, serial string) (Mac, error) {
	serial = strings.TrimSpace(serial)
	if model == "" || serial == "" {
		return Mac{}, errors.New("this Mac's model or serial number is unknown: a fit could not be told from another Mac's")
	}
	sum := sha256.Sum256([]byte("exopower calibration:" + serial))
	return Mac{HWModel: model, SerialSHA256: hex.EncodeToString(sum[:])}, nil
}

// Plug is the plug a calibration was made with.
type Plug struct {
	Kind  string `json:"kind"`
	Model string `json:"model"`
}

// Calibration is what calibration.json holds: the fits of one Mac, how
// they were made, and the steps they were made from.
type Calibration struct {
	SchemaVersion int    `json:"schema_version"`
	Type          string `json:"type"`
	// CalibratedAt is when the ladder ended, RFC 3339, UTC.
	CalibratedAt string `json:"calibrated_at"`
	Mac          Mac    `json:"mac"`
	Plug         Plug   `json:"plug"`
	// Source is what read the Mac: ioreport (the system's power and the
	// SoC's) or powermetrics (the SoC's alone).
	Source        string  `json:"source"`
	LevelsPercent []int   `json:"levels_percent"`
	StepSeconds   float64 `json:"step_seconds"`
	SettleSeconds float64 `json:"settle_seconds"`
	// GPU says why the ladder has no step of the GPU's.
	GPU   string `json:"gpu"`
	Steps []Step `json:"steps"`
	// System is wall = a + b × system; SoC wall = a + b × SoC. Null
	// where not fitted or refused (SoCRefused says why).
	System     *Fit   `json:"system"`
	SoC        *Fit   `json:"soc"`
	SoCRefused string `json:"soc_refused,omitempty"`
}

// TypeCalibration is a Calibration's Type.
const TypeCalibration = "calibration"

// NoGPU is why there is no GPU step: exopower has no way to load the GPU
// without Metal, and does not pretend to.
const NoGPU = "not loaded: exopower has no GPU load of its own (that needs Metal); the fit holds for the CPU's range of the Mac's power"

// Encode writes c as indented JSON.
func Encode(w io.Writer, c *Calibration) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(c)
}

// Decode reads a calibration, and refuses one of a newer exopower or
// of no fit at all.
func Decode(r io.Reader) (*Calibration, error) {
	var c Calibration
	if err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&c); err != nil {
		return nil, fmt.Errorf("not a calibration: %w", err)
	}
	switch {
	case c.Type != TypeCalibration:
		return nil, fmt.Errorf("not a calibration: its type is %q", c.Type)
	case c.SchemaVersion > SchemaVersion:
		return nil, fmt.Errorf("written by a newer exopower (schema %d; this one reads %d)", c.SchemaVersion, SchemaVersion)
	case c.System == nil && c.SoC == nil:
		return nil, errors.New("it holds no fit")
	case c.Mac.HWModel == "" || c.Mac.SerialSHA256 == "":
		return nil, errors.New("it names no Mac")
	}
	// A file edited, or of an older exopower, is held to the bounds a
	// fit was held to when it was made: an estimate never comes from a
	// line that could not be trusted then.
	for _, f := range []struct {
		name string
		fit  *Fit
		b    Bounds
	}{{"system", c.System, SystemBounds}, {"soc", c.SoC, SoCBounds}} {
		if f.fit == nil {
			continue
		}
		if err := f.b.Check(*f.fit); err != nil || !finiteFit(*f.fit) {
			return nil, fmt.Errorf("its %s fit cannot be trusted (%v): calibrate again", f.name, cmp.Or(err, errors.New("a figure is no number")))
		}
	}
	c.Plug.Kind, c.Plug.Model, c.Mac.HWModel, c.CalibratedAt = safe.Text(c.Plug.Kind), safe.Text(c.Plug.Model), safe.Text(c.Mac.HWModel), safe.Text(c.CalibratedAt)
	return &c, nil
}

// finiteFit says whether every figure of f is a number, and its errors
// no lower than 0.
func finiteFit(f Fit) bool {
	for _, v := range []float64{f.Slope, f.InterceptWatts, f.RMSWatts, f.MaxResidualWatts, f.MinWatts, f.MaxWatts, f.RSquared} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return f.RMSWatts >= 0 && f.MaxResidualWatts >= 0
}

// Date is the day of the calibration, as people read it.
func (c *Calibration) Date() string {
	t, err := time.Parse(time.RFC3339Nano, c.CalibratedAt)
	if err != nil {
		return c.CalibratedAt
	}
	return t.Local().Format("2006-01-02")
}

// For says why c is not this Mac's, or nil where it is.
func (c *Calibration) For(m Mac) error {
	switch {
	case c.Mac.HWModel != m.HWModel:
		return fmt.Errorf("the calibration is of a %s, and this Mac is a %s", c.Mac.HWModel, m.HWModel)
	case c.Mac.SerialSHA256 != m.SerialSHA256:
		return fmt.Errorf("the calibration is of another %s (its serial number's digest differs)", c.Mac.HWModel)
	}
	return nil
}
