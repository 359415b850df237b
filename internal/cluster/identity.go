package cluster

import (
	"errors"
	"fmt"
	"strings"

	"github.com/exopower/exopower/internal/cli"
)

// Telling the nodes apart. A Mac given twice would be measured twice and
// summed twice, silently: the same serve under two URLs (127.0.0.1 and
// localhost, a name and its address) answers the same instance_id, and a
// serve on this Mac answers this Mac's boot_id, which "local" measures
// too. Both are refused before anything starts. Nodes that are only
// named alike (two Macs left at a default hostname, mac1 and
// mac1.local) are two Macs: they are measured, and labelled apart.

// Twice is the hint for a Mac given twice.
const Twice = "give each Mac once: one URL for each serve, and either local or the serve on this Mac, not both"

// twice is the error of the members that are one Mac given twice, or
// nil; boot is this Mac's boot session ("" when unknown). A serve too old
// to give an instance_id or a boot_id cannot be told apart, and is
// taken as it is.
func twice(ms []Member, boot string) error {
	local := false
	for _, m := range ms {
		_, isLocal := m.(*LocalMember)
		local = local || isLocal
	}
	var errs []error
	first := map[string]*Remote{}
	for _, m := range ms {
		r, ok := m.(*Remote)
		if !ok {
			continue
		}
		if id := r.status.InstanceID; id != "" && first[id] != nil {
			errs = append(errs, fmt.Errorf("node %s and node %s are one exopower serve (instance_id %s): its Mac would be measured, and summed, twice", first[id].URL(), r.URL(), id))
		} else if id != "" {
			first[id] = r
		}
		if local && boot != "" && r.status.BootID != nil && *r.status.BootID == boot {
			errs = append(errs, fmt.Errorf("node %s is a serve on this Mac (its boot_id is this Mac's), which node %s measures too: this Mac would be measured, and summed, twice", r.URL(), Local))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return cli.Fail(errors.Join(errs...), Twice)
}

// Labels name the members apart, in their order: each by its name,
// unless another's is the same but for case and a ".local" suffix; those
// by their name and address, "mac1 (10.0.0.5:10241)", or "mac1 (local)"
// for this Mac. A label is never another's, whatever the names.
func Labels(ms []Member) []string {
	names, addrs := make([]string, len(ms)), make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name()
		_, addrs[i], _ = strings.Cut(m.URL(), "://")
		if addrs[i] == "" {
			addrs[i] = m.URL()
		}
	}
	return labels(names, addrs)
}

// labels are the labels of nodes of names at addrs.
func labels(names, addrs []string) []string {
	alike := map[string]int{}
	for _, n := range names {
		alike[sameName(n)]++
	}
	out := make([]string, len(names))
	taken := map[string]bool{}
	for i, n := range names {
		label := n
		if alike[sameName(n)] > 1 {
			label = n + " (" + addrs[i] + ")"
		}
		// A name may be another's label ("mac1 (10.0.0.5:10241)"), or
		// two addresses the same under two schemes: a number then.
		for k := 2; taken[sameName(label)]; k++ {
			label = fmt.Sprintf("%s (%s) #%d", n, addrs[i], k)
		}
		taken[sameName(label)] = true
		out[i] = label
	}
	return out
}

// sameName is what two names that name one Mac alike have in common: the
// name without case and a ".local" suffix (mDNS's, which macOS gives the
// hostname on the local network).
func sameName(n string) string {
	return strings.TrimSuffix(strings.ToLower(n), ".local")
}
