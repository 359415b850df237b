package fakepm

import (
	"slices"
	"testing"

	"github.com/exopower/exopower/internal/ioreport"
)

// The fake honours Select as IOReport's binding does: a read fills the
// selected channels only and leaves the others as they were; nil
// selects every channel again.
func TestTheFakeIOReportReadsOnlyTheSelectedChannels(t *testing.T) {
	prof, _ := ParseProfile("0=10,2,0.5")
	f := NewIOReport(prof, "", nil)
	defer f.Close()
	values := make([]int64, len(FakeChannels))
	for i := range values {
		values[i] = -1
	}
	cpu := slices.IndexFunc(FakeChannels, func(c ioreport.Channel) bool { return c.Name == "CPU Energy" })
	gpu := slices.IndexFunc(FakeChannels, func(c ioreport.Channel) bool { return c.Name == "GPU Energy" })
	f.Select([]int{gpu, cpu})
	if err := f.Read(values); err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		if selected := i == cpu || i == gpu; selected == (v == -1) {
			t.Errorf("channel %d (%s), selected %v: %d", i, FakeChannels[i].Name, selected, v)
		}
	}
	f.Select(nil)
	if err := f.Read(values); err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(values, -1); i >= 0 {
		t.Errorf("with nil selected, channel %d (%s) was not read", i, FakeChannels[i].Name)
	}
}
