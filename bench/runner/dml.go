package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
)

// dmlOps are the DML suite's operations, in order.
var dmlOps = []struct{ op, name string }{
	{"delete", "DELETE WHERE " + workload.DMLPredicate},
	{"update", "UPDATE SET " + workload.DMLUpdateCol + " = " + workload.DMLUpdateValue + " WHERE " + workload.DMLPredicate},
	{"merge", "MERGE source ON " + workload.DMLMergeOn + " WHEN MATCHED UPDATE SET * WHEN NOT MATCHED INSERT *"},
}

// dmlSpec is the child spec of op on table (a table of n rows).
func dmlSpec(op, table string, n int64) Spec {
	s := Spec{Op: op, Table: table, Rows: n, Predicate: workload.DMLPredicateOf(op)}
	if op == "update" {
		s.Set = workload.DMLSet()
	}
	return s
}

// written is what one operation added to a table copy, by kind of file.
type written struct {
	data, dv, cdc, log int64 // bytes
	files              int   // data files
}

func (w written) total() int64 { return w.data + w.dv + w.cdc + w.log }

func (w written) String() string {
	s := fmt.Sprintf("wrote %s (%d data files %s", mb(w.total()), w.files, mb(w.data))
	if w.dv > 0 {
		s += ", deletion vector files " + mb(w.dv)
	}
	if w.cdc > 0 {
		s += ", change data " + mb(w.cdc)
	}
	return s + ", log " + mb(w.log) + ")"
}

func mb(b int64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// tableFiles lists the files under root by path relative to it.
func tableFiles(root string) (map[string]int64, error) {
	out := map[string]int64{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = info.Size()
		return nil
	})
	return out, err
}

// newFiles sums the files of table that base does not have: the data,
// deletion vector and change data files and the log files an operation
// wrote.
func newFiles(base map[string]int64, table string) (written, error) {
	var w written
	after, err := tableFiles(table)
	if err != nil {
		return w, err
	}
	for rel, size := range after {
		if _, ok := base[rel]; ok {
			continue
		}
		// Hadoop's local file system (Spark) writes a checksum file
		// .NAME.crc beside each file: it counts as the kind of NAME, not
		// as a file of its own.
		dirName, base := path.Split(rel)
		crc := strings.HasPrefix(base, ".") && strings.HasSuffix(base, ".crc")
		if crc {
			rel = dirName + strings.TrimSuffix(base[1:], ".crc")
		}
		switch {
		case strings.HasPrefix(rel, "_delta_log/"):
			w.log += size
		case strings.HasPrefix(rel, "_change_data/"):
			w.cdc += size
		case strings.HasSuffix(rel, ".bin"):
			w.dv += size
		default:
			w.data += size
			if !crc {
				w.files++
			}
		}
	}
	return w, nil
}

// dmlCheck reads table back with lakelog's reader and compares its rows
// with want, and the rows the engine says it changed with changed.
func dmlCheck(ctx context.Context, table string, o *Outcome, want workload.DMLChecksum, changed int64) string {
	var notes []string
	if o.Changed != changed {
		notes = append(notes, fmt.Sprintf("**WRONG: changed %d rows, want %d**", o.Changed, changed))
	}
	st, err := objstore.Open(ctx, table)
	if err != nil {
		return "not read back: " + err.Error()
	}
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		return "not read back: " + err.Error()
	}
	var got workload.DMLChecksum
	sc, err := reader.NewScan(snap)
	if err == nil {
		for rec, rerr := range sc.Records(ctx) {
			if rerr != nil {
				err = rerr
				break
			}
			got.Add(rec)
		}
	}
	switch {
	case err != nil:
		notes = append(notes, "rows not read back (lakelog's reader: "+firstLine(err.Error())+")")
	case got != want:
		progress("WRONG RESULT: %s: got %+v, want %+v", table, got, want)
		notes = append(notes, fmt.Sprintf("**WRONG: read back %+v, want %+v**", got, want))
	default:
		notes = append(notes, fmt.Sprintf("rows checked (%d rows, %d changed)", got.Rows, changed))
	}
	notes = append(notes, fmt.Sprintf("version %d, %d files", snap.Version(), snap.NumFiles()))
	return strings.Join(notes, ", ")
}

// peerCheck reads table with delta-rs (DataFusion, which applies
// deletion vectors) and compares its rows with want.
func peerCheck(ctx context.Context, e *Engine, table string, want workload.DMLChecksum) string {
	o, err := run(ctx, e, Spec{Op: "dmlcheck", Table: table})
	if err != nil {
		return "delta-rs could not read it: " + firstLine(err.Error())
	}
	var got workload.DMLChecksum
	if err := json.Unmarshal([]byte(o.Info), &got); err != nil {
		return "delta-rs check: " + err.Error()
	}
	if got != want {
		progress("WRONG RESULT: %s read by delta-rs: got %+v, want %+v", table, got, want)
		return fmt.Sprintf("**WRONG: delta-rs reads %+v, want %+v**", got, want)
	}
	return "delta-rs reads the same rows"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// dmlSuite: DELETE, UPDATE and MERGE on identical fresh copies of a base
// table, copy-on-write against delta-rs and with deletion vectors against
// Spark (delta-rs writes none; without Spark, outside CI, lakelog alone);
// time, peak memory, bytes written, and the rows read back.
func dmlSuite(ctx context.Context, cfg *config, rep *report) error {
	const suite = "dml"
	sc := workload.DMLScales[cfg.scale]
	if cfg.dmlRows > 0 {
		sc.Rows = cfg.dmlRows
	}
	if cfg.dmlFiles > 0 {
		sc.Files = cfg.dmlFiles
	}
	n := sc.Rows
	dir := filepath.Join(cfg.work, "dml")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	bases := map[string]string{"cow": filepath.Join(dir, "base-cow"), "dv": filepath.Join(dir, "base-dv")}
	baseFiles := map[string]map[string]int64{}
	for _, mode := range []string{"cow", "dv"} {
		start := time.Now()
		st, err := objstore.Open(ctx, bases[mode])
		if err != nil {
			return err
		}
		if _, err := workload.CreateDMLTable(ctx, st, n, sc.Files, mode == "dv"); err != nil {
			return fmt.Errorf("dml: base table: %w", err)
		}
		if baseFiles[mode], err = tableFiles(bases[mode]); err != nil {
			return err
		}
		var size int64
		for rel, s := range baseFiles[mode] {
			if !strings.HasPrefix(rel, "_delta_log/") {
				size += s
			}
		}
		progress("dml: base table %s: %d rows in %d files, %s, written by lakelog in %s", mode, n, sc.Files, mb(size), time.Since(start).Round(time.Millisecond))
		if mode == "cow" {
			rep.note("dml: base table of %d rows of (id long not null, p string, v double, s string), not partitioned, in %d data files "+
				"of %d consecutive ids (%s), written once by lakelog (version 1); every measured operation runs on a fresh "+
				"hard-linked copy of it (workload.LinkTable; no engine changes a file in place). Copy-on-write rows use the base "+
				"table without table features (protocol 1/2), the deletion-vector rows a second base with delta.enableDeletionVectors=true "+
				"(reader 3 / writer 7, feature deletionVectors), measured against Spark: delta-rs writes no deletion vectors. "+
				"MERGE source: %d rows built before the timer (half existing ids every %d rows, so every file has matches; half new ids), "+
				"v = the row's v + %d. Time includes opening the table. Bytes written: the files the operation added to the copy "+
				"(data, deletion vector .bin, change data, log), found by listing it. Each engine keeps its own writer defaults "+
				"(lakelog target file size 128 MiB; delta-rs's own). Rows checked: each result table read back with lakelog's reader "+
				"and compared with the expected row count, sum(id), string bytes and the exact sum of v·2^32, and the engine's own "+
				"count of changed rows with the expected one",
				n, sc.Files, n/int64(sc.Files), mb(size), n/100, max(1, n/max(1, n/200)), workload.DMLMergeShift)
		}
	}

	// The CPU time of an idle child (runtime start, imports), taken off
	// each operation's so that the cores column shows the operation's.
	idleCPU := map[*Engine]float64{}
	for _, e := range []*Engine{cfg.lakelog, cfg.deltars} {
		if e == nil {
			continue
		}
		o, err := run(ctx, e, Spec{Op: "idle"})
		if err != nil {
			return err
		}
		idleCPU[e] = o.CPUSeconds
	}
	// Spark is the deletion-vector rows' peer (delta-rs writes no deletion
	// vectors). Its idle child checks Java and the packages without a JVM.
	spark, sparkVersion := cfg.spark, ""
	if spark != nil {
		o, err := run(ctx, spark, Spec{Op: "idle"})
		switch {
		case err != nil && os.Getenv("CI") == "true":
			return fmt.Errorf("dml: Spark, the deletion-vector rows' peer, is missing: %w", err)
		case err != nil:
			rep.note("dml: the deletion-vector rows have no peer: Spark is missing (%s)", firstLine(err.Error()))
			spark = nil
		default:
			sparkVersion = o.Info
			rep.note("dml: the deletion-vector rows' peer is %s (delta-rs writes no deletion vectors): bench/peers/spark.py "+
				"starts a local[2] session with Delta (the interop tests' configuration) before the timer and times the Spark SQL "+
				"DELETE / UPDATE / MERGE statement alone, from parsing to its result collected, on its own copy of the same "+
				"deletion-vector base. The same statement first runs untimed on a small scratch deletion-vector table, so the "+
				"timed one runs in a warm JVM (classes loaded, code compiled: the JVM's CPU over it is in the note). The MERGE source is a cached view built before the timer. Peak memory is the JVM's "+
				"(VmHWM of the java process, read before the session stops; Python's own is in the note); the rows it changed "+
				"come from DESCRIBE HISTORY's operationMetrics; its result is read back and checked as lakelog's", sparkVersion)
		}
	}

	type line struct {
		name, mode string
		l, d       *Outcome
		lw, dw     written
		lc, dc     string
		peer       string // the peer's name when not delta-rs
	}
	var lines []line
	for _, op := range dmlOps {
		want, changed := workload.DMLExpect(op.op, n)
		for _, mode := range []string{"cow", "dv"} {
			ln := line{name: op.name, mode: mode}
			peer := cfg.deltars
			if mode == "dv" {
				peer = spark
			}
			for _, e := range []*Engine{cfg.lakelog, peer} {
				if e == nil {
					continue
				}
				table := filepath.Join(dir, fmt.Sprintf("%s-%s-%s", op.op, mode, e.Name))
				prep := func() error { return workload.LinkTable(bases[mode], table) }
				o, err := rep.measure(ctx, e, dmlSpec(op.op, table, n), prep)
				if err != nil {
					return err
				}
				w, err := newFiles(baseFiles[mode], table)
				if err != nil {
					return err
				}
				o.CPUSeconds = max(0, o.CPUSeconds-idleCPU[e])
				if e == spark {
					// rusage is Python's: the JVM's CPU is in its note.
					o.CPUSeconds = 0
				}
				check := dmlCheck(ctx, table, o, want, changed)
				if mode == "dv" && cfg.deltars != nil {
					check += "; " + peerCheck(ctx, cfg.deltars, table, want)
				}
				if e == spark {
					check = sparkVersion + ": " + o.Info + "; " + check
				}
				if e == cfg.lakelog {
					ln.l, ln.lw, ln.lc = o, w, check
				} else {
					ln.d, ln.dw, ln.dc = o, w, check
				}
				if !cfg.keep {
					os.RemoveAll(table)
				}
			}
			name := op.name + ", copy-on-write"
			var peerName string
			if mode == "dv" {
				name = op.name + ", deletion vectors (lakelog only)"
				if spark != nil {
					name, peerName = op.name+", deletion vectors (peer: Spark)", "Spark"
				}
			}
			ln.peer = peerName
			row := &Row{Suite: suite, Name: name, Unit: "rows", Lakelog: ln.l, DeltaRS: ln.d, Peer: peerName,
				LakelogNote: cpuNote(ln.l) + ln.lw.String() + "; " + ln.lc + metricsNote(ln.l)}
			if ln.d != nil {
				row.DeltaRSNote = cpuNote(ln.d) + ln.dw.String() + "; " + ln.dc + metricsNote(ln.d)
			}
			rep.add(row)
			lines = append(lines, ln)
		}
	}

	// The summary the issue asks for: time, peak and bytes side by side.
	var b strings.Builder
	fmt.Fprintf(&b, "## dml summary (%d rows in %d files)\n\n", n, sc.Files)
	b.WriteString("The peer is delta-rs, or Spark where the cells say so (deletion vectors: delta-rs writes none).\n\n")
	b.WriteString("| operation | mode | lakelog time | peer time | speed | lakelog peak MB | peer peak MB | mem | lakelog bytes written | peer bytes written | bytes (peer ÷ lakelog) | cores busy (lakelog / peer) | checks |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	var cowDelete int64
	for _, ln := range lines {
		row := &Row{Unit: "rows", Lakelog: ln.l, DeltaRS: ln.d, Peer: ln.peer}
		speed, mem := ratios(row)
		dBytes, ratio := "—", "—"
		if ln.d != nil {
			dBytes = row.peerCell(mb(ln.dw.total()))
			if ln.lw.total() > 0 {
				ratio = fmt.Sprintf("%.2f×", float64(ln.dw.total())/float64(ln.lw.total()))
			}
		}
		if ln.mode == "cow" && strings.HasPrefix(ln.name, "DELETE") {
			cowDelete = ln.lw.total()
		}
		if ln.mode == "dv" && ln.d == nil && strings.HasPrefix(ln.name, "DELETE") && cowDelete > 0 {
			ratio = fmt.Sprintf("%.1f%% of lakelog copy-on-write", 100*float64(ln.lw.total())/float64(cowDelete))
		}
		checks := "lakelog: " + ln.lc
		if ln.d != nil {
			checks += "; " + row.peer() + ": " + ln.dc
		}
		op, _, _ := strings.Cut(ln.name, " ")
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s |\n", op, ln.mode,
			timeCell(ln.l, false), row.peerCell(timeCell(ln.d, false)), speed, memCell(ln.l), row.peerCell(memCell(ln.d)), mem,
			mb(ln.lw.total()), dBytes, ratio, cores(ln.l), cores(ln.d), strings.ReplaceAll(checks, "|", "/"))
	}
	rep.extra = append(rep.extra, b.String())
	return nil
}

// cpuNote gives the child's CPU time (setup included, an idle child's
// taken off) next to the measured time: how many cores the operation kept
// busy.
func cpuNote(o *Outcome) string {
	if o == nil || o.CPUSeconds == 0 {
		return ""
	}
	return fmt.Sprintf("CPU %s beyond an idle process (%.1f cores over the measured time); ", duration(o.CPUSeconds), o.CPUSeconds/max(o.Seconds, 1e-9))
}

// cores is CPU time over measured time, "—" when not measured.
func cores(o *Outcome) string {
	if o == nil || o.CPUSeconds == 0 || o.Seconds <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", o.CPUSeconds/o.Seconds)
}

// metricsNote lists the engine's own operation metrics.
func metricsNote(o *Outcome) string {
	if o == nil || len(o.Metrics) == 0 {
		return ""
	}
	keys := make([]string, 0, len(o.Metrics))
	for k := range o.Metrics {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, o.Metrics[k]))
	}
	return "; metrics " + strings.Join(parts, " ")
}

// lakelogDML: open the table and run DELETE, UPDATE or MERGE (the
// table's properties decide copy-on-write or deletion vectors); the MERGE
// source is built before the timer.
func lakelogDML(ctx context.Context, spec Spec) (Outcome, error) {
	st, err := objstore.Open(ctx, spec.Table)
	if err != nil {
		return Outcome{}, err
	}
	var src []arrow.RecordBatch
	if spec.Op == "merge" {
		if src, err = workload.Collect(workload.DMLSource(nil, spec.Rows)); err != nil {
			return Outcome{}, err
		}
		defer workload.Release(src)
	}
	start := time.Now()
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		return Outcome{}, err
	}
	res, changed, err := workload.RunDML(ctx, snap, spec.Op, spec.Predicate, spec.Set, workload.Replay(src))
	if err != nil {
		return Outcome{}, err
	}
	secs := time.Since(start).Seconds()
	o := Outcome{Seconds: secs, Count: spec.Rows, Changed: changed, Metrics: map[string]any{}}
	for _, k := range []string{"numAddedFiles", "numRemovedFiles", "numTargetFilesAdded", "numTargetFilesRemoved",
		"numDeletionVectorsAdded", "numTargetDeletionVectorsAdded"} {
		if v, ok := res.Metrics[k]; ok {
			o.Metrics[k] = v
		}
	}
	if res.CommitResult != nil {
		o.Version = res.Version
	}
	return o, nil
}
