package usage

import (
	"testing"

	"github.com/spf13/cobra"
)

func TestNearestFlagGuessesOnlyWhenOneIsNear(t *testing.T) {
	c := &cobra.Command{Use: "x"}
	c.Flags().Duration("interval", 0, "")
	c.Flags().Bool("json", false, "")
	c.Flags().String("node", "", "")
	c.Flags().String("nodes", "", "")
	c.Flags().String("samples", "", "")
	c.Flags().String("secret", "", "")
	c.Flags().MarkHidden("secret")
	for _, tc := range []struct{ name, typed, want string }{
		{"a letter left out", "intervl", "interval"},
		{"two letters swapped", "jsno", "json"},
		{"in capitals", "JSON", "json"},
		{"the start of one flag alone", "sam", "samples"},
		{"a letter added", "sampless", "samples"},
		{"nothing near", "zzzzzzzz", ""},
		{"two equally near", "nodez", ""},
		{"one letter", "j", ""},
		{"a hidden flag is never guessed", "secrte", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nearestFlag(c, tc.typed); got != tc.want {
				t.Errorf("nearestFlag(%q) = %q, want %q", tc.typed, got, tc.want)
			}
		})
	}
}

func TestDistanceCountsEdits(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"interval", "interval", 0},
		{"intervl", "interval", 1}, {"jsno", "json", 1}, {"hepl", "help", 1}, {"kitten", "sitting", 3},
		{"ca", "abc", 3},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
