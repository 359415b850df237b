package wire

// App is one app's energy over a span (run --app, a span of serve that
// names an app, ?app=), as exopower top and serve --apps count it: its
// processes' CPU energy as the kernel measured it, and its share of the
// GPU's time times the GPU's energy, summed over the reads of the whole
// process table from the read at or before the span's start to the
// first at or after its end.
type App struct {
	// Name is the app's name, as given: matched exactly, case and all,
	// with the names exopower top shows.
	Name string `json:"name"`
	// Seen says a process of the app was alive at one of the reads;
	// Processes is how many: those alive at the first, and each that
	// came after. ProcessesRunning is how many were alive at the last
	// read, ProcessesNotReadable how many of those were another user's,
	// whose CPU energy is not read.
	Seen                 bool `json:"seen"`
	Processes            int  `json:"processes"`
	ProcessesRunning     int  `json:"processes_running"`
	ProcessesNotReadable int  `json:"processes_not_readable"`
	// Reads is how many reads of the process table the figures sum;
	// ReadSeconds the time from the read before them to the last, which
	// the figures are of.
	Reads       int `json:"reads"`
	ReadSeconds Num `json:"read_seconds"`
	// EnergyJoules is the app's energy; AvgPowerWatts that over
	// ReadSeconds (0 where no read was counted).
	EnergyJoules  AppFigures `json:"energy_joules"`
	AvgPowerWatts AppFigures `json:"avg_power_watts"`
}

// AppFigures are an app's CPU and GPU figures and their sum, in joules
// or watts as the field that holds them says.
type AppFigures struct {
	Total Num `json:"total"`
	CPU   Num `json:"cpu"`
	GPU   Num `json:"gpu"`
}
