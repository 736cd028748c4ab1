package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Row is one line of the side-by-side table.
type Row struct {
	Suite string
	Name  string
	// Unit is what Count counts: rows, files, commits, puts.
	Unit string
	// Lakelog and DeltaRS are the two engines' outcomes; nil when not
	// measured. A row may carry only one (a floor that is not an engine).
	Lakelog, DeltaRS *Outcome
	// LakelogNote and DeltaRSNote describe each side (what it did, checks).
	LakelogNote, DeltaRSNote string
	// Peer names the engine of the peer column (DeltaRS, DeltaRSNote)
	// when it is not delta-rs: "Spark" on the operations delta-rs cannot
	// do (DML with deletion vectors). Its cells carry the name.
	Peer string
	// PerOp shows the mean latency per unit as the time, for commit loops.
	PerOp bool
}

type report struct {
	cfg     *config
	rows    []*Row
	notes   []string
	errs    map[string]error
	extra   []string // raw sections appended after the table
	elapsed time.Duration
	started time.Time
	chart   string // the chart's file name beside the report, "" for none
}

func newReport(cfg *config) *report {
	return &report{cfg: cfg, errs: map[string]error{}, started: time.Now()}
}

func (r *report) add(row *Row) {
	r.rows = append(r.rows, row)
	progress("%s: %s: lakelog %s | %s %s", row.Suite, row.Name, brief(row.Lakelog, row), row.peer(), brief(row.DeltaRS, row))
}

// peer is the name of the row's peer engine.
func (row *Row) peer() string {
	if row.Peer != "" {
		return row.Peer
	}
	return "delta-rs"
}

// peerCell marks a peer column's cell with the peer's name when the peer
// is not delta-rs, so that the delta-rs columns say whose number it is.
func (row *Row) peerCell(cell string) string {
	if row.Peer == "" || cell == "—" {
		return cell
	}
	return cell + " (" + row.Peer + ")"
}

func brief(o *Outcome, row *Row) string {
	if o == nil {
		return "-"
	}
	return fmt.Sprintf("%s, %s, %.0f MB", timeCell(o, row.PerOp), rateCell(o, row.Unit), o.PeakMB)
}

func (r *report) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (r *report) failed(suite string, err error) { r.errs[suite] = err }

func (r *report) anyFailed() bool { return len(r.errs) > 0 }

// wrongRows are the rows whose result a check marked WRONG.
func (r *report) wrongRows() []*Row {
	var out []*Row
	for _, row := range r.rows {
		if strings.Contains(row.LakelogNote, "WRONG") || strings.Contains(row.DeltaRSNote, "WRONG") {
			out = append(out, row)
		}
	}
	return out
}

// exitStatus is the runner's exit status: 1 when a suite did not complete
// or a row is WRONG, else 0. Times never fail a run.
func (r *report) exitStatus() int {
	if r.anyFailed() || len(r.wrongRows()) > 0 {
		return 1
	}
	return 0
}

// measure runs spec under e cfg.count times, calling prepare before each
// run, and returns the run with the median time, with the largest peak
// memory of all runs.
func (r *report) measure(ctx context.Context, e *Engine, spec Spec, prepare func() error) (*Outcome, error) {
	if e == nil {
		return nil, nil
	}
	var outs []Outcome
	for range r.cfg.count {
		if prepare != nil {
			if err := prepare(); err != nil {
				return nil, err
			}
		}
		o, err := run(ctx, e, spec)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	return medianOutcome(outs), nil
}

func medianOutcome(outs []Outcome) *Outcome {
	slices.SortFunc(outs, func(a, b Outcome) int {
		switch {
		case a.Seconds < b.Seconds:
			return -1
		case a.Seconds > b.Seconds:
			return 1
		}
		return 0
	})
	m := outs[len(outs)/2]
	for _, o := range outs {
		m.PeakMB = max(m.PeakMB, o.PeakMB)
	}
	return &m
}

// rate is units per second.
func rate(o *Outcome) float64 {
	if o == nil || o.Seconds <= 0 {
		return 0
	}
	if o.Rate > 0 {
		return o.Rate
	}
	return float64(o.Count) / o.Seconds
}

func human(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.2fG", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e4:
		return fmt.Sprintf("%.0fk", x/1e3)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	case x >= 10:
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

func duration(secs float64) string {
	switch {
	case secs >= 10:
		return fmt.Sprintf("%.1f s", secs)
	case secs >= 1:
		return fmt.Sprintf("%.2f s", secs)
	case secs >= 0.01:
		return fmt.Sprintf("%.0f ms", secs*1000)
	}
	return fmt.Sprintf("%.2f ms", secs*1000)
}

func timeCell(o *Outcome, perOp bool) string {
	if o == nil || o.Count == 0 {
		return "—"
	}
	if perOp && o.Latency != nil {
		return fmt.Sprintf("%s/op", duration(o.Latency.Mean/1000))
	}
	return duration(o.Seconds)
}

func rateCell(o *Outcome, unit string) string {
	if o == nil || o.Seconds <= 0 || o.Count == 0 {
		return "—"
	}
	return human(rate(o)) + " " + unit + "/s"
}

func memCell(o *Outcome) string {
	if o == nil || o.PeakMB == 0 {
		return "—" // not measured (a suite timed in the runner's process)
	}
	return fmt.Sprintf("%.0f", o.PeakMB)
}

// ratios: speed is lakelog's rate over delta-rs's (above 1: lakelog is
// faster); memory is delta-rs's peak over lakelog's (above 1: lakelog uses
// less).
func ratios(row *Row) (speed, mem string) {
	speed, mem = "—", "—"
	if row.Lakelog == nil || row.DeltaRS == nil {
		return
	}
	if a, b := rate(row.Lakelog), rate(row.DeltaRS); a > 0 && b > 0 {
		speed = fmt.Sprintf("%.2f×", a/b)
	}
	if row.Lakelog.PeakMB > 0 {
		mem = fmt.Sprintf("%.2f×", row.DeltaRS.PeakMB/row.Lakelog.PeakMB)
	}
	return
}

func (r *report) markdown() string {
	var b strings.Builder
	cfg := r.cfg
	fmt.Fprintf(&b, "# lakelog vs delta-rs, %s\n\n", r.started.Format("2006-01-02 15:04"))
	fmt.Fprintf(&b, "- scale: %s, runs per measurement: %d (median time, largest peak)\n", cfg.scale, cfg.count)
	fmt.Fprintf(&b, "- lakelog: %s, %s\n", gitDescribe(cfg.repo), runtime.Version())
	if cfg.deltars != nil {
		fmt.Fprintf(&b, "- delta-rs: %s\n", r.peerVersion())
	} else {
		fmt.Fprintf(&b, "- delta-rs: not measured (-no-peer)\n")
	}
	fmt.Fprintf(&b, "- machine: %s, %d CPUs, %s\n", cpuModel(), runtime.NumCPU(), memTotal())
	fmt.Fprintf(&b, "- runner wall time: %s\n", r.elapsed.Round(time.Second))
	if r.chart != "" {
		fmt.Fprintf(&b, "- chart of the speed ratios: [%s](%s)\n", r.chart, r.chart)
	}
	b.WriteString("\n")
	b.WriteString("Time is the measured part only (see bench/README.md); peak is the child process's\n")
	b.WriteString("peak resident memory (VmHWM, see bench/README.md), runtime and imports included (see the idle row).\n")
	b.WriteString("speed = lakelog rate ÷ delta-rs rate (above 1: lakelog faster); mem = delta-rs peak ÷ lakelog peak\n")
	b.WriteString("(above 1: lakelog smaller). Where delta-rs cannot do an operation, the delta-rs columns hold another\n")
	b.WriteString("peer's numbers, marked with its name (Spark: DML with deletion vectors).\n\n")
	suite := ""
	for _, row := range r.rows {
		if row.Suite != suite {
			suite = row.Suite
			fmt.Fprintf(&b, "\n## %s\n\n", suite)
			b.WriteString("| operation | lakelog time | lakelog rate | lakelog peak MB | delta-rs time | delta-rs rate | delta-rs peak MB | speed | mem | notes |\n")
			b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
		}
		speed, mem := ratios(row)
		var notes []string
		if row.LakelogNote != "" {
			notes = append(notes, "lakelog: "+row.LakelogNote)
		}
		if row.DeltaRSNote != "" {
			notes = append(notes, row.peer()+": "+row.DeltaRSNote)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.Name,
			timeCell(row.Lakelog, row.PerOp), rateCell(row.Lakelog, row.Unit), memCell(row.Lakelog),
			row.peerCell(timeCell(row.DeltaRS, row.PerOp)), row.peerCell(rateCell(row.DeltaRS, row.Unit)), row.peerCell(memCell(row.DeltaRS)),
			speed, mem, strings.ReplaceAll(strings.Join(notes, "; "), "|", "/"))
	}
	if wrong := r.wrongRows(); len(r.errs) > 0 || len(wrong) > 0 {
		b.WriteString("\n## Failures\n\n")
		for _, s := range slices.Sorted(maps.Keys(r.errs)) {
			fmt.Fprintf(&b, "- %s: %s\n", s, strings.ReplaceAll(r.errs[s].Error(), "\n", "\n  "))
		}
		for _, row := range wrong {
			fmt.Fprintf(&b, "- WRONG result: %s: %s\n", row.Suite, row.Name)
		}
	}
	if len(r.notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	for _, x := range r.extra {
		b.WriteString("\n" + x)
	}
	return b.String()
}

// path is where the report goes: <results>/<date>.md, or
// <date>-<time>.md when a result of the same day exists.
func (r *report) path() (string, error) {
	if err := os.MkdirAll(r.cfg.results, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(r.cfg.results, r.started.Format("2006-01-02")+".md")
	if _, err := os.Stat(path); err == nil {
		path = filepath.Join(r.cfg.results, r.started.Format("2006-01-02-150405")+".md")
	}
	return path, nil
}

func (r *report) peerVersion() string {
	o, err := run(context.Background(), r.cfg.deltars, Spec{Op: "idle"})
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return o.Info
}

func gitDescribe(repo string) string {
	out, err := exec.Command("git", "-C", repo, "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown commit"
	}
	return "commit " + strings.TrimSpace(string(out))
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "memory unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return fmt.Sprintf("%.1f GB RAM", float64(kb)/(1<<20))
		}
	}
	return "memory unknown"
}
