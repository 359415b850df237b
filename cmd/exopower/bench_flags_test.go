package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// hyperfineHelp is the installed hyperfine's --help, "" when hyperfine is
// not installed: what it takes tells which of its versions it is.
var hyperfineHelp = sync.OnceValue(func() string {
	out, err := exec.Command("hyperfine", "--help").Output()
	if err != nil {
		return ""
	}
	return string(out)
})

// likeHyperfine is a bench run twice, by exopower and by hyperfine, each
// in a directory of its own: what its commands leave in a file there,
// and its exit status.
type likeHyperfine struct {
	args []string
	// files are written in each directory before the run.
	files map[string]string
	// result names the file compared, want what exopower must leave in
	// it ("" when nothing), status exopower's exit status.
	result, want string
	status       int
	// needs are the hyperfine flags (or help's words) the case needs: an
	// older hyperfine lacking one is not run (1.15 lacks --conclude,
	// --reference, --input and the codes of --ignore-failure).
	needs []string
	// own is a case of exopower's alone, which hyperfine does not have.
	own bool
}

// check runs the case with exopower, and with hyperfine where it is
// installed and new enough, and holds both to want (hyperfine's status
// only to failing or not: it exits 1 where exopower passes on the
// command's status).
func (c likeHyperfine) check(t *testing.T) {
	t.Helper()
	run := func(cmd *exec.Cmd) (string, int, string) {
		t.Helper()
		for name, content := range c.files {
			if err := os.WriteFile(filepath.Join(cmd.Dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, err := cmd.CombinedOutput()
		got, rerr := os.ReadFile(filepath.Join(cmd.Dir, c.result))
		if rerr != nil && !os.IsNotExist(rerr) {
			t.Fatal(rerr)
		}
		return string(got), exitCode(t, err), string(out)
	}
	cmd, _ := exopowerCmd(t, append([]string{"bench", "--baseline", "0"}, c.args...)...)
	got, status, out := run(cmd)
	if got != c.want || status != c.status {
		t.Errorf("exopower bench %q: status %d, %s holds\n%s\nwant status %d and\n%s\noutput:\n%s", c.args, status, c.result, got, c.status, c.want, out)
	}
	help := hyperfineHelp()
	if c.own {
		return
	}
	if help == "" {
		t.Logf("hyperfine is not installed: exopower held to what hyperfine's source does")
		return
	}
	for _, n := range c.needs {
		if !strings.Contains(help, n) {
			t.Logf("the installed hyperfine lacks %s: exopower held to what hyperfine's source does", n)
			return
		}
	}
	h := exec.Command("hyperfine", append([]string{"--style", "none"}, c.args...)...)
	h.Dir = t.TempDir()
	hgot, hstatus, hout := run(h)
	if hgot != got || (hstatus == 0) != (status == 0) {
		t.Errorf("hyperfine %q: status %d, %s holds\n%s\nexopower's status %d and\n%s\nhyperfine's output:\n%s", c.args, hstatus, c.result, hgot, status, got, hout)
	}
}

// -N (--shell=none) splits a command into words as a shell does, quotes
// and backslashes included; sh, run so, shows the words it got.
func TestBenchSplitsACommandWithoutAShellAsHyperfineDoes(t *testing.T) {
	t.Parallel()
	likeHyperfine{args: []string{"-N", "-r", "1", `sh -c 'printf "[%s]\n" "$@" > args' argv0 'a b' c\ d "e \"f\"" 'g'h "" '$HOME'`},
		result: "args", want: "[a b]\n[c d]\n[e \"f\"]\n[gh]\n[]\n[$HOME]\n"}.check(t)
	// The hooks too.
	likeHyperfine{args: []string{"--shell=none", "-r", "1", "-p", `sh -c 'echo "$1" >> log' x 'p q'`, `sh -c 'echo "$1" >> log' x 'r  s'`},
		result: "log", want: "p q\nr  s\n"}.check(t)
}

// A quote left open is refused before anything runs, naming the command.
func TestBenchRefusesACommandWithAQuoteLeftOpen(t *testing.T) {
	t.Parallel()
	cmd, dir := exopowerCmd(t, "bench", "-N", "-r", "1", "--baseline", "0", "-p", "true", `prog 'a b`)
	out, err := cmd.CombinedOutput()
	if code := exitCode(t, err); code != 125 || !strings.Contains(string(out), `exopower: error: Failed to parse command 'prog 'a b': a quote is not closed (--shell=none splits it into words as a shell would)`) {
		t.Errorf("status %d, output %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "powermetrics.pid")); err == nil {
		t.Error("powermetrics was started for a command that cannot run")
	}
}

// -S takes a command line, as hyperfine does: the shell's own argv shows
// its words, then -c and the command.
func TestBenchShellIsACommandLine(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc/self/cmdline to read a shell's argv from")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	const c = `tr '\0' ' ' < /proc/$$/cmdline > argv`
	likeHyperfine{args: []string{"-S", "bash --norc", "-r", "1", c}, result: "argv", want: "bash --norc -c " + c + " "}.check(t)
	likeHyperfine{args: []string{"-S", "default", "-r", "1", c}, result: "argv", want: "sh -c " + c + " "}.check(t)
}

// Two -L lists and two commands: each combination with every command
// before the next, the first list varying faster than the second, as in
// hyperfine; "\," is a comma within a value.
func TestBenchParameterListsInHyperfinesOrder(t *testing.T) {
	t.Parallel()
	likeHyperfine{args: []string{"-r", "1", "-L", "a", "x,y", "-L", "b", "1,2", "echo c1 {a} {b} >> log", "echo c2 {a} {b} >> log"},
		result: "log", want: "c1 x 1\nc2 x 1\nc1 y 1\nc2 y 1\nc1 x 2\nc2 x 2\nc1 y 2\nc2 y 2\n"}.check(t)
	likeHyperfine{args: []string{"-r", "1", "-L", "v", `a\,b,c\\d,,e\f`, `printf '%s\n' '{v}' >> log`},
		result: "log", want: "a,b\nc\\d\n\ne\\f\n"}.check(t)
	likeHyperfine{args: []string{"-r", "1", "-P", "x", "0", "1", "-D", "0.25", "echo {x} >> log"},
		result: "log", want: "0\n0.25\n0.50\n0.75\n1.00\n"}.check(t)
	likeHyperfine{args: []string{"-r", "1", "-P", "x", "1", "2", "-s", "echo setup {x} >> log", "echo a{x} >> log", "echo b{x} >> log"},
		result: "log", want: "setup 1\na1\nsetup 1\nb1\nsetup 2\na2\nsetup 2\nb2\n"}.check(t)
}

// --prepare and --conclude once for each command, each with its own, in
// warmup runs too; the reference is the first command.
func TestBenchHooksOnePerCommand(t *testing.T) {
	t.Parallel()
	likeHyperfine{args: []string{"-r", "2", "-w", "1", "-p", "echo pA >> log", "-p", "echo pB >> log", "echo A >> log", "echo B >> log"},
		result: "log", want: strings.Repeat("pA\nA\n", 3) + strings.Repeat("pB\nB\n", 3)}.check(t)
	likeHyperfine{args: []string{"-r", "1", "-C", "echo cA >> log", "--conclude", "echo cB >> log", "-p", "echo p >> log", "echo A >> log", "echo B >> log"},
		result: "log", want: "p\nA\ncA\np\nB\ncB\n", needs: []string{"--conclude"}}.check(t)
	likeHyperfine{args: []string{"-r", "1", "--reference", "echo R >> log", "-p", "echo pR >> log", "-p", "echo pA >> log", "echo A >> log"},
		result: "log", want: "pR\nR\npA\nA\n", needs: []string{"--reference"}}.check(t)
	// Neither once nor once each: refused.
	likeHyperfine{args: []string{"-r", "1", "-p", "echo 1 >> log", "-p", "echo 2 >> log", "echo A >> log", "echo B >> log", "echo C >> log"},
		result: "log", status: 125}.check(t)
}

// -s, -C and -c are --setup, --conclude and --cleanup, as hyperfine's
// cli.rs has them.
func TestBenchShortFlagsOfTheHooks(t *testing.T) {
	t.Parallel()
	likeHyperfine{args: []string{"-r", "2", "-s", "echo setup >> log", "-C", "echo conclude >> log", "-c", "echo cleanup >> log", "echo run >> log"},
		result: "log", want: "setup\nrun\nconclude\nrun\nconclude\ncleanup\n", needs: []string{"--conclude"}}.check(t)
}

// --ignore-failure=CODES measures the runs that end with one of them
// and stops at any other status; alone, it ignores every one.
func TestBenchIgnoresTheFailuresItIsGiven(t *testing.T) {
	t.Parallel()
	codes := "comma-separated list of exit codes"
	likeHyperfine{args: []string{"-r", "2", "--ignore-failure=1,2", "echo run >> log; exit 2"},
		result: "log", want: "run\nrun\n", needs: []string{codes}}.check(t)
	likeHyperfine{args: []string{"-r", "2", "--ignore-failure=1", "echo run >> log; exit 3"},
		result: "log", want: "run\n", status: 3, needs: []string{codes}}.check(t)
	likeHyperfine{args: []string{"-r", "2", "-w", "1", "--ignore-failure=1", "echo run >> log; exit 3"},
		result: "log", want: "run\n", status: 125, needs: []string{codes}}.check(t)
	likeHyperfine{args: []string{"-r", "2", "--ignore-failure", "echo run >> log; exit 3"}, result: "log", want: "run\nrun\n"}.check(t)
	likeHyperfine{args: []string{"-r", "2", "--ignore-failure=all-non-zero", "echo run >> log; exit 3"},
		result: "log", want: "run\nrun\n", needs: []string{codes}}.check(t)
}

// The measured runs, and the warmup runs, are told which they are.
func TestBenchTellsEachRunItsIteration(t *testing.T) {
	t.Parallel()
	likeHyperfine{args: []string{"-r", "2", "-w", "1", "-p", "echo p$HYPERFINE_ITERATION >> log", "echo $HYPERFINE_ITERATION >> log"},
		result: "log", want: "p\nwarmup-0\np\n0\np\n1\n", needs: []string{"HYPERFINE_ITERATION"}}.check(t)
	likeHyperfine{args: []string{"-r", "2", "echo $EXOPOWER_ITERATION >> log"}, result: "log", want: "0\n1\n", own: true}.check(t)
}

// The count of runs: -M alone lowers the least 10 to it; with no time to
// fill, -m's least; -r with -m or -M, or -m above -M, are refused.
func TestBenchCountsRunsAsHyperfine(t *testing.T) {
	t.Parallel()
	likeHyperfine{args: []string{"-M", "3", "echo >> log"}, result: "log", want: "\n\n\n"}.check(t)
	likeHyperfine{args: []string{"-m", "2", "--min-benchmarking-time", "0", "echo >> log"}, result: "log", want: "\n\n"}.check(t)
	likeHyperfine{args: []string{"-r", "2", "-m", "1", "echo >> log"}, result: "log", status: 125}.check(t)
	likeHyperfine{args: []string{"-m", "3", "-M", "2", "echo >> log"}, result: "log", status: 125}.check(t)
}

// By default a command runs at least 10 times, and as many more as fill
// 3 s at the pace of its first run.
func TestBenchRunsAtLeastTenTimesByDefault(t *testing.T) {
	t.Parallel()
	rep := benchJSON(t, "0=3,1,0.5", "--baseline", "0", "true")
	if n := len(rep.Results[0].Runs); n < 10 {
		t.Errorf("%d runs, want at least 10", n)
	}
}

// -n names the commands in the results, --reference-name the reference,
// with the parameters put in, as in hyperfine's JSON.
func TestBenchNamesTheCommandsAsHyperfine(t *testing.T) {
	t.Parallel()
	names := func(t *testing.T, dir string) string {
		var rep struct {
			Results []struct{ Command string } `json:"results"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "b.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, r := range rep.Results {
			n = append(n, r.Command)
		}
		return strings.Join(n, "|")
	}
	for _, c := range []struct {
		args  []string
		want  string
		needs string
	}{
		{[]string{"-n", "first", "true", "sleep 0"}, "first|sleep 0", ""},
		{[]string{"-n", "nap {t}", "-L", "t", "0,0.01", "sleep {t}"}, "nap 0|nap 0.01", ""},
		{[]string{"-n", "a", "-n", "b", "-n", "c", "-P", "t", "1", "3", "sleep 0.0{t}"}, "a|b|c", ""},
		{[]string{"--reference", "true", "--reference-name", "nothing", "-n", "nap", "sleep 0"}, "nothing|nap", "--reference-name"},
	} {
		args := append([]string{"-r", "1", "--export-json", "b.json"}, c.args...)
		cmd, dir := exopowerCmd(t, append([]string{"bench", "--baseline", "0"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("exopower bench %q: %v\n%s", args, err, out)
		}
		if got := names(t, dir); got != c.want {
			t.Errorf("exopower bench %q names %s, want %s", args, got, c.want)
		}
		if h := hyperfineHelp(); h != "" && strings.Contains(h, c.needs) {
			hc := exec.Command("hyperfine", append([]string{"--style", "none"}, args...)...)
			hc.Dir = t.TempDir()
			if out, err := hc.CombinedOutput(); err != nil {
				t.Fatalf("hyperfine %q: %v\n%s", args, err, out)
			}
			if got := names(t, hc.Dir); got != c.want {
				t.Errorf("hyperfine %q names %s, exopower %s", args, got, c.want)
			}
		}
	}
}

// --output=FILE gets the stdout of every command, made anew for each, so
// that it keeps the last one's; a bare name is refused, as in hyperfine.
// --input is every command's stdin, from its start.
func TestBenchOutputAndInputAsHyperfine(t *testing.T) {
	t.Parallel()
	likeHyperfine{args: []string{"-r", "2", "--output=./o", "-p", "echo prepare", "echo run $HYPERFINE_ITERATION; echo err >&2"},
		result: "o", want: "run 1\n", needs: []string{"HYPERFINE_ITERATION"}}.check(t)
	likeHyperfine{args: []string{"-r", "1", "--output=o", "echo run"}, result: "o", status: 125}.check(t)
	likeHyperfine{args: []string{"-r", "1", "--output=./a", "--output=./b", "echo run", "echo run2"},
		result: "b", want: "run2\n", needs: []string{"HYPERFINE_ITERATION"}}.check(t)
	likeHyperfine{args: []string{"-r", "2", "--input", "in", "-s", "wc -l >> log", "head -n 1 >> log"}, files: map[string]string{"in": "one\ntwo\n"},
		result: "log", want: "2\none\none\n", needs: []string{"--input"}}.check(t)
	likeHyperfine{args: []string{"-r", "1", "--output=pipe", "echo run | tee log"}, result: "log", want: "run\n"}.check(t)
}

// --sort and --time-unit reach the report: the tables in the order of
// mean energy or as given, their times in the unit asked for.
func TestBenchSortAndTimeUnitReachTheReport(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		sort, unit, header string
		first              string
	}{
		{"command", "microsecond", "Mean [µs]", "`sleep 0.3`"},
		{"mean-time", "millisecond", "Mean [ms]", "`true`"},
	} {
		cmd, _ := exopowerCmd(t, "bench", "-r", "1", "--baseline", "0", "--style", "none", "--sort", c.sort, "-u", c.unit, "--export-markdown", "-", "sleep 0.3", "true")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("exopower bench: %v", err)
		}
		lines := strings.Split(string(out), "\n")
		if len(lines) < 3 || !strings.Contains(lines[0], c.header) || !strings.HasPrefix(lines[2], "| "+c.first+" |") {
			t.Errorf("--sort %s -u %s: the table is\n%s", c.sort, c.unit, out)
		}
	}
}
