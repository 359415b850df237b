package apps

import (
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// Line is one line of exopower top --json: a refresh, as a Snapshot
// holds it (docs/json/top.md). Its shape is the same whatever the flags:
// what the source does not read is null.
type Line struct {
	SchemaVersion int `json:"schema_version"`
	// Type is "apps".
	Type string `json:"type"`
	// Time is the end of the refresh's window, RFC 3339 with
	// nanoseconds, UTC.
	Time string `json:"time"`
	// WindowSeconds is the refresh's window; ElapsedSeconds the time
	// since top's first reading of the processes, to the window's end.
	WindowSeconds  wire.Num `json:"window_seconds"`
	ElapsedSeconds wire.Num `json:"elapsed_seconds"`
	// Scope is what the apps and the rest add up to: "system" or "soc".
	Scope    string `json:"scope"`
	AllUsers bool   `json:"all_users"`
	// Mac is the Mac's rails: power over the window, energy since the
	// start.
	Mac LineMac `json:"mac"`
	// Wall is the metered plug of --wall; null without one.
	Wall *wire.SampleWall `json:"wall"`
	Apps []LineApp        `json:"apps"`
	// ForgottenEnergyJoules is the energy of the apps gone so long
	// that they are no longer listed.
	ForgottenEnergyJoules LineFigures `json:"forgotten_energy_joules"`
	Rest                  LineRest    `json:"rest"`
	Processes             LineCounts  `json:"processes"`
	CPUScale              wire.Num    `json:"cpu_scale"`
	Warnings              []string    `json:"warnings"`
}

// LineMac is the Mac's rails in a Line.
type LineMac struct {
	PowerWatts   wire.Components `json:"power_watts"`
	EnergyJoules wire.Components `json:"energy_joules"`
}

// LineFigures are an app's or a process's figures in a Line.
type LineFigures struct {
	Total wire.Num `json:"total"`
	CPU   wire.Num `json:"cpu"`
	GPU   wire.Num `json:"gpu"`
}

// LineApp is an app in a Line.
type LineApp struct {
	Name string `json:"name"`
	// Pid is its own process's, null where that is not alive.
	Pid          *int32        `json:"pid"`
	Gone         bool          `json:"gone"`
	NotReadable  int           `json:"not_readable"`
	PowerWatts   LineFigures   `json:"power_watts"`
	EnergyJoules LineFigures   `json:"energy_joules"`
	Processes    []LineProcess `json:"processes"`
}

// LineProcess is a process of an app in a Line.
type LineProcess struct {
	Pid          int32       `json:"pid"`
	Name         string      `json:"name"`
	UID          uint32      `json:"uid"`
	Readable     bool        `json:"readable"`
	PowerWatts   LineFigures `json:"power_watts"`
	EnergyJoules LineFigures `json:"energy_joules"`
}

// LineRest is the remainder in a Line.
type LineRest struct {
	PowerWatts   LineRestFigures `json:"power_watts"`
	EnergyJoules LineRestFigures `json:"energy_joules"`
}

// LineRestFigures are the parts of the remainder; DRAM and System are
// null where the scope is the SoC's.
type LineRestFigures struct {
	Total  wire.Num  `json:"total"`
	CPU    wire.Num  `json:"cpu"`
	GPU    wire.Num  `json:"gpu"`
	ANE    wire.Num  `json:"ane"`
	DRAM   *wire.Num `json:"dram"`
	System *wire.Num `json:"system"`
}

// LineCounts are a refresh's processes in a Line.
type LineCounts struct {
	Listed      int `json:"listed"`
	Read        int `json:"read"`
	NotReadable int `json:"not_readable"`
	Started     int `json:"started"`
	Ended       int `json:"ended"`
	Refused     int `json:"refused"`
}

// NewLine is s as a line of JSON.
func NewLine(s Snapshot) Line {
	l := Line{
		SchemaVersion: wire.SchemaVersion, Type: "apps", Time: s.End.UTC().Format(time.RFC3339Nano),
		WindowSeconds: wire.Num(s.End.Sub(s.Start).Seconds()), ElapsedSeconds: wire.Num(s.End.Sub(s.Since).Seconds()),
		Scope: s.Scope, AllUsers: s.AllUsers, CPUScale: wire.Num(s.CPUScale), Warnings: s.Warnings,
		Mac:                   LineMac{PowerWatts: wire.NewComponents(s.Mac.Power, s.Mac.Has), EnergyJoules: wire.NewComponents(s.Mac.Energy, s.Mac.Has)},
		ForgottenEnergyJoules: lineFigures(s.Forgotten),
		Rest:                  LineRest{PowerWatts: lineRest(s.Rest.Power, s.Scope), EnergyJoules: lineRest(s.Rest.Energy, s.Scope)},
		Processes:             LineCounts(s.Processes),
		Apps:                  make([]LineApp, 0, len(s.Apps)),
	}
	if l.Warnings == nil {
		l.Warnings = []string{}
	}
	if s.Wall != nil {
		l.Wall = &wire.SampleWall{EnergyJoules: wire.Num(s.Wall.EnergyJoules)}
		if s.Wall.HasPower {
			p := wire.Num(s.Wall.PowerWatts)
			l.Wall.PowerWatts = &p
		}
	}
	for _, a := range s.Apps {
		la := LineApp{Name: a.Name, Gone: a.Gone, NotReadable: a.NotReadable, PowerWatts: lineFigures(a.Power), EnergyJoules: lineFigures(a.Energy),
			Processes: make([]LineProcess, 0, len(a.Processes))}
		if a.Pid != 0 {
			pid := a.Pid
			la.Pid = &pid
		}
		for _, p := range a.Processes {
			la.Processes = append(la.Processes, LineProcess{Pid: p.Pid, Name: p.Name, UID: p.UID, Readable: p.Readable,
				PowerWatts: lineFigures(p.Power), EnergyJoules: lineFigures(p.Energy)})
		}
		l.Apps = append(l.Apps, la)
	}
	return l
}

func lineFigures(f Figures) LineFigures {
	return LineFigures{Total: wire.Num(f.Total()), CPU: wire.Num(f.CPU), GPU: wire.Num(f.GPU)}
}

func lineRest(r RestFigures, scope string) LineRestFigures {
	l := LineRestFigures{Total: wire.Num(r.Total), CPU: wire.Num(r.CPU), GPU: wire.Num(r.GPU), ANE: wire.Num(r.ANE)}
	if scope == "system" {
		dram, system := wire.Num(r.DRAM), wire.Num(r.System)
		l.DRAM, l.System = &dram, &system
	}
	return l
}
