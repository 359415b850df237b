package source

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/ioreport"
)

// A signal before the first reading ends the start with what happened,
// not "context canceled" and a usage hint.
func TestAnInterruptBeforeTheFirstReadingSaysSo(t *testing.T) {
	prof, _ := fakepm.ParseProfile("0=10,0,0")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Start(ctx, Options{Kind: IOReport, Interval: time.Hour,
		IOReport: func() (ioreport.Library, error) { return fakepm.NewIOReport(prof, "", nil), nil }})
	var f *cli.Error
	if err == nil || err.Error() != "interrupted before the first reading; nothing was measured" || !errors.As(err, &f) || len(cli.HintsOf(err)) != 0 {
		t.Errorf("%v (%T): want the interruption, without a hint", err, err)
	}
}
