package attrib

import "fmt"

// coalition is the tree's resource coalition, where it is the tree's own.
// macOS puts every process in the coalition of the process that started
// it: a command started from a terminal shares the terminal app's with
// every other tab, and only a process launchd starts as a job of its own
// (a LaunchAgent, launchctl submit, brew services) begins a new one. The
// coalition's own count of live tasks tells: the tree's, plus the
// others that are known to share it (exopower, when it started the
// command), or more.
type coalition struct {
	id    uint64
	own   bool
	first CoalitionUsage
	note  string // why there is no coalition figure
}

func openCoalition(k Kernel, root int32, others, tree int) coalition {
	id, err := k.CoalitionOf(root)
	if err != nil {
		return coalition{note: "its coalition could not be read: " + err.Error()}
	}
	u, err := k.CoalitionUsage(id)
	if err != nil {
		return coalition{note: "its coalition could not be read: " + err.Error()}
	}
	live := int64(u.TasksStarted) - int64(u.TasksExited)
	if extra := live - int64(tree+others); extra > 0 {
		others := fmt.Sprintf("%d other processes", extra)
		if extra == 1 {
			others = "another process"
		}
		return coalition{note: "it shares its coalition with " + others + " (a terminal's, an app's or a service's): " +
			"started by launchd as a job of its own, it would have one"}
	}
	return coalition{id: id, own: true, first: u}
}

// since reads the coalition's energy since it was opened, in joules.
func (c *coalition) since(k Kernel) (*CoalitionEnergy, string) {
	if !c.own {
		return nil, c.note
	}
	u, err := k.CoalitionUsage(c.id)
	if err != nil {
		return nil, "its coalition could not be read at the end: " + err.Error()
	}
	return &CoalitionEnergy{
		CPU: nj(delta(u.CPUNJ, c.first.CPUNJ)),
		GPU: nj(delta(u.GPUNJ, c.first.GPUNJ)),
		ANE: nj(delta(u.ANENJ, c.first.ANENJ)),
	}, ""
}

// nj is n nanojoules in joules.
func nj(n uint64) float64 { return float64(n) / 1e9 }
