package doctor

import (
	"fmt"
	"os"
	"strings"
)

// checkProcesses says whether run --attribute can attribute energy to a
// command's processes here: the kernel's per-process energy (macOS 13 or
// later on Apple Silicon, not a virtual machine), read from exopower's
// own process; the GPU's clients; the coalitions, and whether they carry
// the GPU's and the Neural Engine's energy. Only for information where
// it cannot: the whole Mac is measured all the same.
func (s system) checkProcesses() check {
	c := check{name: "processes", ok: true, info: true}
	k, err := s.processes()
	if err != nil {
		c.detail = "run --attribute cannot read processes' energy here: " + err.Error()
		return c
	}
	defer k.Close()
	info := k.Info()
	if !info.ProcessEnergy {
		c.detail = fmt.Sprintf("this Mac keeps no energy per process (macOS %s, %s): run --attribute needs macOS 13 or later on Apple Silicon, not in a virtual machine (kern.pervasive_energy)", info.MacOS, info.Chip)
		return c
	}
	self := int32(os.Getpid())
	_, err = k.Identify(self)
	u, uerr := k.Usage(self)
	if err == nil {
		err = uerr
	}
	if err != nil {
		c.ok, c.info = false, false
		c.detail = fmt.Sprintf("macOS %s keeps energy per process, but exopower's own could not be read: %v", info.MacOS, err)
		c.fixes = []string{"run --attribute will fail the same way: report it, with this line and `sw_vers`"}
		return c
	}
	parts := []string{fmt.Sprintf("macOS %s, %s: the kernel measures each process's CPU energy (exopower's own so far: %.3f J)", info.MacOS, info.Chip, float64(u.EnergyNJ)/1e9)}
	if gpu, err := k.GPUTimes(nil); err != nil {
		parts = append(parts, "the GPU's clients could not be read ("+err.Error()+"), so no GPU share")
	} else {
		parts = append(parts, fmt.Sprintf("the GPU's time of %d processes", len(gpu)))
	}
	switch {
	case !info.AcceleratorEnergy:
		parts = append(parts, "coalitions carry no GPU or Neural Engine energy before macOS 15")
	default:
		parts = append(parts, "coalitions carry the GPU's and the Neural Engine's energy, used for a command with one of its own")
	}
	c.info, c.detail = false, strings.Join(parts, "; ")
	return c
}
