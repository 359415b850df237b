package trapz

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// window returns the two points of a window average: its value at both edges.
func window(from, to, watts float64) []Point {
	return []Point{{sec(from), watts}, {sec(to), watts}}
}

func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// Integrate returns the energy in joules under the points, in order; a
// single point is taken as constant power over span.
func Integrate(points []Point, span time.Duration) float64 {
	var a Accumulator
	for _, p := range points {
		a.Add(p)
	}
	if a.n == 1 {
		return a.last.Watts * span.Seconds()
	}
	return a.Joules()
}

func TestIntegrate(t *testing.T) {
	tests := []struct {
		name   string
		points []Point
		span   time.Duration
		want   float64
	}{
		{
			name:   "point readings of 10, 10 and 100 W at 0, 4.9 and 5 s are 54.5 J, not their 40 W mean times 5 s",
			points: []Point{{0, 10}, {sec(4.9), 10}, {sec(5), 100}},
			want:   54.5,
		},
		{
			name:   "window averages of 10 W over 4.9 s then 100 W over 0.1 s are exactly 59 J",
			points: append(window(0, 4.9, 10), window(4.9, 5, 100)...),
			want:   59,
		},
		{
			name:   "point readings integrate as trapezoids",
			points: []Point{{0, 0}, {sec(1), 10}, {sec(2), 10}},
			want:   15,
		},
		{
			name:   "a single point is constant power over the span",
			points: []Point{{sec(3), 7}},
			span:   sec(2),
			want:   14,
		},
		{
			name: "no point is no energy",
			span: sec(2),
			want: 0,
		},
		{
			name:   "a step back in time adds nothing",
			points: []Point{{0, 10}, {sec(1), 10}, {sec(0.5), 1000}, {sec(2), 10}},
			want:   20,
		},
		{
			name:   "a gap between windows is bridged by a straight line",
			points: append(window(0, 1, 10), window(2, 3, 30)...),
			want:   10 + 20 + 30,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Integrate(tt.points, tt.span); !near(got, tt.want, 1e-12) {
				t.Errorf("Integrate = %.15g J, want %.15g J", got, tt.want)
			}
		})
	}
}

func TestAccumulatorMeanIsTimeWeighted(t *testing.T) {
	var a Accumulator
	for _, p := range []Point{{0, 10}, {sec(4.9), 10}, {sec(5), 100}} {
		a.Add(p)
	}
	if got := a.Joules() / 5; !near(got, 10.9, 1e-12) {
		t.Errorf("mean = %v W, want 10.9 W (an arithmetic mean of the samples says 40 W)", got)
	}
	if a.n != 3 || a.last.At != sec(5) {
		t.Errorf("points, last = %d, %v; want 3, 5s", a.n, a.last.At)
	}
}

func TestAccumulatorLeavesOutPointsOutOfOrder(t *testing.T) {
	var a Accumulator
	a.Add(Point{sec(2), 1})
	a.Add(Point{sec(1), 1})
	if a.n != 1 {
		t.Errorf("points = %d, want 1: the point out of order is left out", a.n)
	}
	if a.last.At != sec(2) {
		t.Errorf("the last point moved back to %v", a.last.At)
	}
	a.Add(Point{sec(3), 1})
	if a.Joules() != 1 {
		t.Errorf("Joules = %v, want 1 J from 2 s to 3 s", a.Joules())
	}
}

func TestAccumulatorCopyIsASnapshot(t *testing.T) {
	var a Accumulator
	a.Add(Point{0, 5})
	a.Add(Point{sec(1), 5})
	snap := a
	a.Add(Point{sec(2), 5})
	if snap.Joules() != 5 || a.Joules() != 10 {
		t.Errorf("snapshot %v J, live %v J; want 5 J and 10 J", snap.Joules(), a.Joules())
	}
}

// A day of 100 ms windows keeps its precision: compensated summation holds
// the error far below what a naive sum of 864,000 steps would drift by.
func TestAccumulatorDayOfWindowsStaysExact(t *testing.T) {
	var a Accumulator
	const step = 100 * time.Millisecond
	const n = 24 * 36000
	for i := 0; i < n; i++ {
		w := 7.3 + float64(i%7)*0.11
		a.Add(Point{time.Duration(i) * step, w})
		a.Add(Point{time.Duration(i+1) * step, w})
	}
	var want float64
	for i := 0; i < 7; i++ {
		want += (7.3 + float64(i)*0.11) * 0.1 * float64(n/7)
	}
	for i := 0; i < n%7; i++ {
		want += (7.3 + float64(i)*0.11) * 0.1
	}
	if !near(a.Joules(), want, 1e-12) {
		t.Errorf("Joules = %.15g, want %.15g", a.Joules(), want)
	}
}

func Example() {
	// Three point readings: 10 W at 0 s and at 4.9 s, 100 W at 5 s. The
	// arithmetic mean of the readings says 40 W; the time-weighted mean
	// is 10.9 W.
	var a Accumulator
	a.Add(Point{At: 0, Watts: 10})
	a.Add(Point{At: 4900 * time.Millisecond, Watts: 10})
	a.Add(Point{At: 5000 * time.Millisecond, Watts: 100})
	fmt.Printf("%.1f J, %.1f W on average\n", a.Joules(), a.Joules()/5)
	// Output: 54.5 J, 10.9 W on average
}

func Example_windows() {
	// powermetrics reports window averages: 10 W over [0 s, 4.9 s], then
	// 100 W over [4.9 s, 5 s]. Each window enters at both of its edges,
	// so the step function integrates exactly.
	var a Accumulator
	a.Add(Point{At: 0, Watts: 10})
	a.Add(Point{At: 4900 * time.Millisecond, Watts: 10})
	a.Add(Point{At: 4900 * time.Millisecond, Watts: 100})
	a.Add(Point{At: 5000 * time.Millisecond, Watts: 100})
	fmt.Printf("%.1f J, %.1f W on average\n", a.Joules(), a.Joules()/5)
	// Output: 59.0 J, 11.8 W on average
}

func BenchmarkAccumulatorAdd(b *testing.B) {
	var a Accumulator
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		a.Add(Point{time.Duration(i) * time.Millisecond, float64(i % 13)})
	}
}
