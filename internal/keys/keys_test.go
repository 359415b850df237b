package keys

import (
	"slices"
	"testing"
)

// The keys the views take, as terminals send them, and what is dropped.
func TestDecodeReadsTheKeysTerminalsSend(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Key
	}{
		{"q", []Key{{Rune: 'q'}}},
		{"Pé", []Key{{Rune: 'P'}, {Rune: 'é'}}},
		{"\x1b[A\x1b[B\x1bOC\x1b[D", []Key{{Name: Up}, {Name: Down}, {Name: Right}, {Name: Left}}},
		{"\x1b[5~\x1b[6~\x1b[H\x1b[4~", []Key{{Name: PageUp}, {Name: PageDown}, {Name: Home}, {Name: End}}},
		{"\x1b", []Key{{Name: Escape}}},
		{"\r\n\t\x7f", []Key{{Name: Enter}, {Name: Enter}, {Name: Tab}, {Name: Backspace}}},
		// A sequence it does not know (F5 here) is dropped whole, not
		// read as "[15~"; so are control characters and bytes that are
		// not UTF-8; a sequence cut short is dropped.
		{"\x1b[15~x\x01\xff\x1b[1;", []Key{{Rune: 'x'}}},
	} {
		if got := Decode([]byte(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("Decode(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
