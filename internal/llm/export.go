package llm

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/exopower/exopower/internal/wire"
)

// settingColumns are the CSV's columns, a row per setting: each figure's
// mean and σ in the SoC's scope, then in the whole Mac's (empty where
// not measured), net where there is a baseline.
var settingColumns = []string{"model", "concurrency", "requests", "failed", "attribution",
	"joules_per_output_token", "joules_per_output_token_stddev", "net_joules_per_output_token", "net_joules_per_output_token_stddev", "net_joules_per_output_token_uncertainty",
	"joules_per_prompt_token", "joules_per_prompt_token_stddev", "net_joules_per_prompt_token", "net_joules_per_prompt_token_stddev", "net_joules_per_prompt_token_uncertainty",
	"joules_per_request", "joules_per_request_stddev", "net_joules_per_request", "net_joules_per_request_stddev",
	"avg_power_watts", "system_joules_per_output_token", "system_net_joules_per_output_token", "system_joules_per_prompt_token",
	"system_net_joules_per_prompt_token", "system_joules_per_request", "time_to_first_token_seconds", "time_to_first_token_seconds_stddev",
	"output_tokens_per_second", "output_tokens_per_second_stddev", "run_energy_joules", "run_net_energy_joules", "run_joules_per_output_token", "run_net_joules_per_output_token",
	"run_completion_tokens", "run_seconds", "wall_energy_joules", "wall_uncertainty_joules", "wall_method", "wall_joules_per_output_token",
	"wall_net_energy_joules", "wall_net_joules_per_output_token", "wall_estimated_energy_joules", "wall_estimated_uncertainty_joules", "wall_estimated_from",
	"wall_estimated_joules_per_output_token", "wall_estimated_net_energy_joules", "wall_estimated_net_joules_per_output_token"}

// WriteCSV writes a row per setting.
func WriteCSV(w io.Writer, rep *Report) error {
	c := csv.NewWriter(w)
	c.Write(slices.Concat(settingColumns, costColumns))
	for _, r := range rep.Results {
		c.Write(settingRow(r))
	}
	c.Flush()
	return c.Error()
}

func settingRow(r Result) []string {
	f := r.Figures
	if f == nil {
		f = &Figures{}
	}
	soc, sys := f.SoC, f.System
	if soc == nil {
		soc = &Scope{}
	}
	if sys == nil {
		sys = &Scope{}
	}
	row := []string{r.Model, strconv.Itoa(r.Concurrency), strconv.Itoa(f.Requests), strconv.Itoa(f.Failed), r.Attribution}
	row = append(row, meanSD(soc.JoulesPerOutputToken)...)
	row = append(row, meanSD(soc.NetJoulesPerOutputToken)...)
	row = append(row, cell(soc.NetJoulesPerOutputTokenUncertainty))
	row = append(row, meanSD(soc.JoulesPerPromptToken)...)
	row = append(row, meanSD(soc.NetJoulesPerPromptToken)...)
	row = append(row, cell(soc.NetJoulesPerPromptTokenUncertainty))
	row = append(row, meanSD(soc.JoulesPerRequest)...)
	row = append(row, meanSD(soc.NetJoulesPerRequest)...)
	row = append(row, mean(soc.AvgPowerWatts), mean(sys.JoulesPerOutputToken), mean(sys.NetJoulesPerOutputToken), mean(sys.JoulesPerPromptToken),
		mean(sys.NetJoulesPerPromptToken), mean(sys.JoulesPerRequest))
	row = append(row, meanSD(f.TimeToFirstTokenSeconds)...)
	row = append(row, meanSD(f.OutputTokensPerSecond)...)
	if run := r.Run; run != nil && run.Summary != nil {
		e := run.Summary.EnergyJoules.Total
		row = append(row, cell(&e), cell(run.NetEnergyJoules), cell(run.JoulesPerOutputToken), cell(run.NetJoulesPerOutputToken), strconv.Itoa(run.CompletionTokens), cell(&run.Summary.DurationSeconds))
	} else {
		row = append(row, "", "", "", "", "", "")
	}
	row = append(row, wallCells(r)...)
	row = append(row, estimatedCells(r)...)
	return append(row, costCells(r)...)
}

// estimatedCells are the run's columns at the wall as estimated from
// this Mac's calibration, empty without one.
func estimatedCells(r Result) []string {
	run := r.Run
	if run == nil || run.Summary == nil || run.Summary.WallEstimated == nil || run.WallEstimated == nil {
		return make([]string, 6)
	}
	e := run.Summary.WallEstimated
	return []string{cell(&e.EnergyJoules), cell(&e.UncertaintyJoules), e.From, cell(run.WallEstimated.JoulesPerOutputToken),
		cell(run.WallEstimated.NetEnergyJoules), cell(run.WallEstimated.NetJoulesPerOutputToken)}
}

// wallCells are the run's columns at the wall, empty without --wall.
func wallCells(r Result) []string {
	run := r.Run
	if run == nil || run.Summary == nil || run.Summary.Wall == nil || run.Wall == nil {
		return make([]string, 6)
	}
	w := run.Summary.Wall
	return []string{cell(&w.EnergyJoules), cell(&w.UncertaintyJoules), w.Method, cell(run.Wall.JoulesPerOutputToken),
		cell(run.Wall.NetEnergyJoules), cell(run.Wall.NetJoulesPerOutputToken)}
}

func cell(n *wire.Num) string {
	if n == nil {
		return ""
	}
	return strconv.FormatFloat(float64(*n), 'g', -1, 64)
}

func mean(s *Spread) string {
	if s == nil {
		return ""
	}
	return cell(&s.Mean)
}

func meanSD(s *Spread) []string {
	if s == nil {
		return []string{"", ""}
	}
	return []string{cell(&s.Mean), cell(s.Stddev)}
}

// requestColumns are the per-request CSV's columns.
var requestColumns = []string{"model", "concurrency", "index", "started_at", "first_token_seconds", "last_token_seconds", "duration_seconds",
	"prompt_tokens", "completion_tokens", "tokens_from", "overlapped", "prefill_seconds", "prefill_joules", "prefill_net_joules", "prefill_system_joules",
	"decode_seconds", "decode_joules", "decode_net_joules", "decode_system_joules", "whole_joules", "whole_net_joules", "whole_system_joules", "error"}

// WriteRequestsCSV writes a row per request of every setting.
func WriteRequestsCSV(w io.Writer, rep *Report) error {
	c := csv.NewWriter(w)
	c.Write(requestColumns)
	for _, r := range rep.Results {
		for _, q := range r.Requests {
			prompt := ""
			if q.PromptTokens != nil {
				prompt = strconv.Itoa(*q.PromptTokens)
			}
			errText := ""
			if q.Error != nil {
				errText = *q.Error
			}
			row := []string{r.Model, strconv.Itoa(r.Concurrency), strconv.Itoa(q.Index), q.StartedAt, cell(q.FirstTokenSeconds), cell(q.LastTokenSeconds),
				cell(&q.DurationSeconds), prompt, strconv.Itoa(q.CompletionTokens), q.TokensFrom, strconv.FormatBool(q.Overlapped)}
			row = append(row, cell(&q.Prefill.Seconds), cell(&q.Prefill.EnergyJoules), cell(q.Prefill.NetEnergyJoules), cell(q.Prefill.SystemEnergyJoules))
			row = append(row, cell(&q.Decode.Seconds), cell(&q.Decode.EnergyJoules), cell(q.Decode.NetEnergyJoules), cell(q.Decode.SystemEnergyJoules))
			row = append(row, cell(&q.Whole.EnergyJoules), cell(q.Whole.NetEnergyJoules), cell(q.Whole.SystemEnergyJoules), errText)
			c.Write(row)
		}
	}
	c.Flush()
	return c.Error()
}

// WriteMarkdown writes a table, a row per setting: the figures people
// compare, net where there is a baseline.
func WriteMarkdown(w io.Writer, rep *Report) error {
	net := rep.Baseline != nil
	kind := "gross"
	if net {
		kind = "net of idle"
	}
	atWall := slices.ContainsFunc(rep.Results, func(r Result) bool { return r.Run != nil && r.Run.Wall != nil })
	estimated := slices.ContainsFunc(rep.Results, func(r Result) bool { return r.Run != nil && r.Run.WallEstimated != nil })
	var b strings.Builder
	fmt.Fprintf(&b, "| Model | In flight | Requests | mJ/output token (%s) | mJ/prompt token (%s) | J/request (%s) | Time to first token [s] | Output tokens/s | Whole run mJ/output token (%s, exact) |", kind, kind, kind, kind)
	rule := "|:---|---:|---:|---:|---:|---:|---:|---:|---:|"
	if atWall {
		fmt.Fprintf(&b, " Whole run at the wall mJ/output token (%s) |", kind)
		rule += "---:|"
	}
	if estimated {
		fmt.Fprintf(&b, " Whole run at the wall (estimated) mJ/output token (%s) |", kind)
		rule += "---:|"
	}
	priced := pricedColumns(rep)
	b.WriteString(priced.head())
	rule += strings.Repeat("---:|", priced.n())
	b.WriteString("\n" + rule + "\n")
	for _, r := range rep.Results {
		f := r.Figures
		if f == nil || f.SoC == nil {
			fmt.Fprintf(&b, "| `%s` | %d | 0 | | | | | | |%s%s%s\n", r.Model, r.Concurrency, map[bool]string{true: " |"}[atWall], map[bool]string{true: " |"}[estimated],
				strings.Repeat(" |", priced.n()))
			continue
		}
		out, prompt, req := f.SoC.JoulesPerOutputToken, f.SoC.JoulesPerPromptToken, f.SoC.JoulesPerRequest
		if net {
			out, prompt, req = f.SoC.NetJoulesPerOutputToken, f.SoC.NetJoulesPerPromptToken, f.SoC.NetJoulesPerRequest
		}
		runJ := ""
		if r.Run != nil && net {
			runJ = format(scaled(r.Run.NetJoulesPerOutputToken, 1000))
		} else if r.Run != nil {
			runJ = format(scaled(r.Run.JoulesPerOutputToken, 1000))
		}
		fmt.Fprintf(&b, "| `%s` | %d | %d | %s | %s | %s | %s | %s | %s |", r.Model, r.Concurrency, f.Requests,
			mdSpread(milli(out)), mdSpread(milli(prompt)), mdSpread(req), mdSpread(f.TimeToFirstTokenSeconds), mdSpread(f.OutputTokensPerSecond), runJ)
		if atWall {
			b.WriteString(" " + wallCell(r, net) + " |")
		}
		if estimated {
			b.WriteString(" " + estimatedCell(r, net) + " |")
		}
		b.WriteString(priced.cells(r) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func format(n *wire.Num) string {
	if n == nil {
		return ""
	}
	return strconv.FormatFloat(float64(*n), 'g', 4, 64)
}

func mdSpread(s *Spread) string {
	if s == nil {
		return ""
	}
	if s.Stddev == nil {
		return format(&s.Mean)
	}
	return format(&s.Mean) + " ± " + format(s.Stddev)
}

// milli is s in thousandths: an energy per token in millijoules.
func milli(s *Spread) *Spread {
	if s == nil {
		return nil
	}
	m := *s
	m.Mean, m.Median, m.P90, m.Min, m.Max = s.Mean*1000, s.Median*1000, s.P90*1000, s.Min*1000, s.Max*1000
	m.Stddev = scaled(s.Stddev, 1000)
	return &m
}

func scaled(n *wire.Num, k float64) *wire.Num {
	if n == nil {
		return nil
	}
	x := *n * wire.Num(k)
	return &x
}

// wallCell is the run's mJ per output token at the wall, ± the plug's
// uncertainty, gross or net.
func wallCell(r Result, net bool) string {
	if r.Run == nil || r.Run.Wall == nil {
		return ""
	}
	w := r.Run.Wall
	return perTokenCell(w.JoulesPerOutputToken, w.UncertaintyJoulesPerOutputToken, w.NetJoulesPerOutputToken, w.NetEnergyUncertaintyJoules, r.Run.CompletionTokens, net)
}

// estimatedCell is the run's mJ per output token at the wall as
// estimated, ± the fit's RMS over the run (its net: ± the idle power's
// error), gross or net.
func estimatedCell(r Result, net bool) string {
	if r.Run == nil || r.Run.WallEstimated == nil {
		return ""
	}
	w := r.Run.WallEstimated
	return perTokenCell(w.JoulesPerOutputToken, w.UncertaintyJoulesPerOutputToken, w.NetJoulesPerOutputToken, w.NetEnergyUncertaintyJoules, r.Run.CompletionTokens, net)
}

// perTokenCell is a figure per output token in mJ, ± its uncertainty:
// the gross one, or the net one, ± the net energy's uncertainty over the
// tokens.
func perTokenCell(gross, grossU, netPer, netU *wire.Num, tokens int, net bool) string {
	per, u := gross, grossU
	if net {
		per, u = netPer, nil
		if netU != nil && tokens > 0 {
			u = num(float64(*netU) / float64(tokens))
		}
	}
	if per == nil {
		return ""
	}
	text := format(scaled(per, 1000))
	if u != nil {
		text += " ± " + format(scaled(u, 1000))
	}
	return text
}
