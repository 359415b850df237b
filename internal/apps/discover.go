package apps

import (
	"errors"
	"strconv"
	"strings"

	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/safe"
)

// discover takes the process listed as pid for the first time: its
// identity, owner, names and app, and its first reading, u where the
// caller read it already. A process that started since the last poll
// (its unique id is newer than every one that poll saw: the Mac gives
// them in order) counts from its start, so that a short one is counted
// whole; one that was there already counts from this reading. One that
// cannot be identified is not taken: it is asked again at the next
// poll.
func (p *Poller) discover(pid int32, first bool, bound uint64, u *attrib.Usage) error {
	id, err := p.k.Identify(pid)
	if err != nil {
		return nil
	}
	desc, _ := p.d.Describe(pid)
	var path string
	if p.path, err = p.d.Path(pid, p.path); err == nil {
		path = string(p.path)
	}
	pr := &proc{pid: pid, id: id.UniqueID, uid: desc.UID, name: processName(path, desc.Name(), pid), gen: p.gen, readable: true}
	var head bool
	pr.app, head = p.appOf(pid, path, desc.Name())
	pr.app.joined++
	if pr.app.live++; head {
		pr.app.pid = pid
	}
	p.procs[pid] = pr
	p.fresh = append(p.fresh, pr)
	p.maxID = max(p.maxID, id.UniqueID)
	fromBirth := !first && id.UniqueID > p.prevMax
	pr.gpuBase = !fromBirth
	if !first {
		p.counts.Started++
	}
	if u == nil {
		var usage attrib.Usage
		if usage, err = p.k.Usage(pid); err != nil {
			if errors.Is(err, attrib.ErrNotPermitted) {
				pr.readable = false
				pr.app.notReadable++
				p.counts.NotReadable++
			}
			if errors.Is(err, attrib.ErrUnsupported) {
				return err
			}
			return nil
		}
		u = &usage
	}
	p.counts.Read++
	pr.start = u.Start
	if !fromBirth {
		pr.lastNJ = u.EnergyNJ
		return nil
	}
	p.count(pr, u.EnergyNJ, bound)
	return nil
}

// appOf is the app of a process: that of the process responsible for it
// where macOS names another, else its own, by its name, which the
// process then heads.
func (p *Poller) appOf(pid int32, path, comm string) (*app, bool) {
	head, err := p.d.Responsible(pid)
	if err != nil || head <= 0 || head == pid {
		return p.app(appName(path, comm, pid)), true
	}
	if h := p.procs[head]; h != nil {
		return h.app, false
	}
	// Its app's own process is not read yet: named as it will be.
	desc, _ := p.d.Describe(head)
	var hpath string
	if b, err := p.d.Path(head, p.path); err == nil {
		p.path, hpath = b, string(b)
	}
	return p.app(appName(hpath, desc.Name(), head)), false
}

// app is the app of name, made where there is none.
func (p *Poller) app(name string) *app {
	a := p.apps[name]
	if a == nil {
		a = &app{name: name}
		p.apps[name] = a
	}
	return a
}

// appName is what a process is called as an app: the bundle that holds
// its executable (".../Safari.app/Contents/MacOS/Safari": Safari), else
// its executable's name, else its short name; made safe to print.
func appName(path, comm string, pid int32) string {
	if i := strings.LastIndex(path, "/Contents/MacOS/"); i > 0 {
		bundle := path[strings.LastIndexByte(path[:i], '/')+1 : i]
		if name, ok := strings.CutSuffix(bundle, ".app"); ok && name != "" {
			return safe.Text(name)
		}
	}
	return processName(path, comm, pid)
}

// processName is what a process is called: its executable's name, else
// its short name, else its pid; made safe to print.
func processName(path, comm string, pid int32) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 && i < len(path)-1 {
		return safe.Text(path[i+1:])
	}
	if comm != "" {
		return safe.Text(comm)
	}
	return "pid " + strconv.Itoa(int(pid))
}
