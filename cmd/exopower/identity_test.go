package main

import (
	"slices"
	"testing"
)

func TestSupplementaryGroups(t *testing.T) {
	// A Mac administrator's groups, as getgrouplist lists them: 23 of
	// them, the primary group (staff, 20) not first.
	admin := []uint32{12, 20, 61, 79, 80, 81, 98, 701, 33, 100, 204, 250, 395, 398, 399, 400, 702, 703, 704, 705, 706, 707, 708}
	for _, tt := range []struct {
		name    string
		primary uint32
		groups  []uint32
		limit   int
		want    []uint32
	}{
		{"primary first, each once", 20, []uint32{12, 20, 61, 12}, 0, []uint32{20, 12, 61}},
		{"primary not in the list", 65534, nil, 0, []uint32{65534}},
		{"no limit", 20, admin, 0, append([]uint32{20, 12}, admin[2:]...)},
		{"macOS's limit", 20, admin, 16, append([]uint32{20, 12}, admin[2:16]...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := supplementaryGroups(tt.primary, tt.groups, tt.limit)
			if !slices.Equal(got, tt.want) {
				t.Errorf("supplementaryGroups(%d, %v, %d) = %v, want %v", tt.primary, tt.groups, tt.limit, got, tt.want)
			}
			if tt.limit > 0 && len(got) > tt.limit {
				t.Errorf("%d groups, more than the limit %d", len(got), tt.limit)
			}
		})
	}
}
