package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// chartRow is one bar of the chart: a row's speed ratio.
type chartRow struct {
	Suite string  `json:"suite"`
	Name  string  `json:"name"`
	Ratio float64 `json:"ratio"`
}

// chartRows are the rows that have a speed ratio (both engines measured,
// both rates above zero), in the report's order.
func chartRows(rows []*Row) []chartRow {
	var out []chartRow
	for _, row := range rows {
		if row.Lakelog == nil || row.DeltaRS == nil {
			continue
		}
		if a, b := rate(row.Lakelog), rate(row.DeltaRS); a > 0 && b > 0 {
			out = append(out, chartRow{Suite: row.Suite, Name: row.Name, Ratio: a / b})
		}
	}
	return out
}

// writeChart draws the speed ratios of rows as an SVG at svg with
// bench/peers/chart.py (matplotlib) under python; the rows go to the
// script as JSON in svg's name with .json for .svg, which is kept beside
// it.
func writeChart(ctx context.Context, python, peers, title string, rows []*Row, svg string) error {
	cr := chartRows(rows)
	if len(cr) == 0 {
		return fmt.Errorf("runner: chart: no row has a speed ratio")
	}
	js, err := json.MarshalIndent(map[string]any{"title": title, "rows": cr}, "", " ")
	if err != nil {
		return err
	}
	in := strings.TrimSuffix(svg, filepath.Ext(svg)) + ".json"
	if err := os.WriteFile(in, js, 0o644); err != nil {
		return fmt.Errorf("runner: chart: %w", err)
	}
	cmd := exec.CommandContext(ctx, python, filepath.Join(peers, "chart.py"), in, svg)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("runner: chart: %s %s: %w\n%s", python, filepath.Join(peers, "chart.py"), err, strings.TrimSpace(out.String()))
	}
	fi, err := os.Stat(svg)
	if err != nil || fi.Size() == 0 {
		return fmt.Errorf("runner: chart: %s not written (%v)", svg, err)
	}
	return nil
}

// drawChart writes the chart of the report's speed ratios beside the
// report at path (same name, .svg) and links it from the report. Without
// the peer there are no ratios and no chart; a chart that fails to draw
// fails the run.
func (r *report) drawChart(ctx context.Context, path string) {
	if r.cfg.python == "" || len(chartRows(r.rows)) == 0 {
		r.note("chart: none (no row has both engines' rates)")
		return
	}
	svg := strings.TrimSuffix(path, ".md") + ".svg"
	peers := "delta-rs"
	for _, row := range r.rows {
		if row.Peer != "" && row.DeltaRS != nil {
			peers = "delta-rs (" + row.Peer + " where the row says)"
			break
		}
	}
	title := fmt.Sprintf("lakelog vs %s, speed ratios, %s scale, %s", peers, r.cfg.scale, r.started.Format("2006-01-02 15:04"))
	if err := writeChart(ctx, r.cfg.python, r.cfg.peers, title, r.rows, svg); err != nil {
		r.failed("chart", err)
		return
	}
	r.chart = filepath.Base(svg)
	progress("wrote the chart %s", svg)
}
