package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// config is the run's settings.
type config struct {
	scale          string
	only           map[string]bool
	count          int
	python         string
	peers          string // bench/peers
	results        string // bench/results
	work           string
	keep           bool
	targetFileSize int64
	dmlRows        int64 // dml suite size, 0: the scale's
	dmlFiles       int
	snapshotFiles  int  // snapshot suite's table, 0: the scale's
	plainStrings   bool // lakelog's scans return plain strings (the default options)
	lakelog        *Engine
	deltars        *Engine // nil without the peer
	spark          *Engine // bench/peers/spark.py, nil without the peer
	repo           string
}

var suites = []string{"datapath", "checkpoint", "commit", "commit-s3", "checkpoint-s3", "dml", "maintenance", "cdf", "follow", "follow-s3", "pipeline", "writers", "writers-s3",
	"datapath-s3", "datapath-gcs", "datapath-azure", "snapshot", "maintenance-s3", "convert", "schema"}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-child" {
		if err := childMain(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(runMain(os.Args[1:]))
}

func runMain(args []string) int {
	fs := flag.NewFlagSet("runner", flag.ContinueOnError)
	scale := fs.String("scale", "small", "small (a quick check) or full (the sizes the issues ask for)")
	only := fs.String("only", "", "comma-separated suites to run: "+strings.Join(suites, ", ")+" (default all)")
	count := fs.Int("count", 1, "runs of each measurement; the table shows the median time and the largest peak")
	python := fs.String("python", os.Getenv("LAKELOG_PYTHON"), "python with deltalake installed (default $LAKELOG_PYTHON)")
	noPeer := fs.Bool("no-peer", false, "measure lakelog only")
	work := fs.String("work", "", "folder for the tables (default a new temporary folder, removed afterwards)")
	keep := fs.Bool("keep", false, "keep the work folder")
	out := fs.String("results", "", "folder for the results file (default bench/results in the repository)")
	target := fs.Int64("target-file-size", 0, "data file target size in bytes for the data-path tables (default: sized for ~150 files)")
	dmlRows := fs.Int64("dml-rows", 0, "rows of the dml suite's table (default: the scale's, 200k small, 10M full)")
	dmlFiles := fs.Int("dml-files", 0, "data files of the dml suite's table (default: the scale's, 10 small, 100 full)")
	snapshotFiles := fs.Int("snapshot-files", 0, "files of the snapshot suite's synthetic table (default: the scale's, 100k small, 10M full)")
	strs := fs.String("strings", "views", "how lakelog's data-path scans return strings: views (reader.WithStringViews, as DataFusion) or plain (reader.NewScan's default options)")
	benchmarks := fs.String("benchmarks", "", "also write this run's tables into FILE (BENCHMARKS.md) between its tables markers")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *scale != "small" && *scale != "full" {
		fmt.Fprintln(os.Stderr, "runner: -scale is small or full")
		return 2
	}
	if *strs != "views" && *strs != "plain" {
		fmt.Fprintln(os.Stderr, "runner: -strings is views or plain")
		return 2
	}
	cfg := &config{scale: *scale, count: max(1, *count), keep: *keep, targetFileSize: *target, only: map[string]bool{},
		dmlRows: *dmlRows, dmlFiles: *dmlFiles, snapshotFiles: *snapshotFiles, plainStrings: *strs == "plain"}
	// The children read it (lakelogScan).
	os.Setenv(scanStringsEnv, *strs)
	for _, s := range strings.Split(*only, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		known := false
		for _, k := range suites {
			known = known || k == s
		}
		if !known {
			fmt.Fprintf(os.Stderr, "runner: unknown suite %q (have %s)\n", s, strings.Join(suites, ", "))
			return 2
		}
		cfg.only[s] = true
	}
	repo, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg.repo = repo
	cfg.peers = filepath.Join(repo, "bench", "peers")
	cfg.results = *out
	if cfg.results == "" {
		cfg.results = filepath.Join(repo, "bench", "results")
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		return 1
	}
	cfg.lakelog = &Engine{Name: "lakelog", Command: func(spec []byte) []string { return []string{exe, "-child", string(spec)} }}
	if !*noPeer {
		if *python == "" {
			fmt.Fprintln(os.Stderr, "runner: no delta-rs: set LAKELOG_PYTHON (source .ci/peers.sh && peers_install && peers_env) or pass -no-peer")
			return 1
		}
		cfg.python = *python
		script := filepath.Join(cfg.peers, "deltars.py")
		cfg.deltars = &Engine{Name: "delta-rs", Command: func(spec []byte) []string { return []string{cfg.python, script, string(spec)} }}
		sparkScript := filepath.Join(cfg.peers, "spark.py")
		cfg.spark = &Engine{Name: "Spark", Command: func(spec []byte) []string { return []string{cfg.python, sparkScript, string(spec)} }}
	}
	cfg.work = *work
	if cfg.work == "" {
		if cfg.work, err = os.MkdirTemp("", "lakelog-bench-"); err != nil {
			fmt.Fprintln(os.Stderr, "runner:", err)
			return 1
		}
		if !cfg.keep {
			defer os.RemoveAll(cfg.work)
		}
	}
	ctx := context.Background()
	rep := newReport(cfg)
	start := time.Now()
	for _, s := range suites {
		if len(cfg.only) > 0 && !cfg.only[s] {
			continue
		}
		var err error
		switch s {
		case "datapath":
			err = dataPath(ctx, cfg, rep)
		case "checkpoint":
			err = checkpoints(ctx, cfg, rep)
		case "commit":
			err = commitsLocal(ctx, cfg, rep)
		case "commit-s3":
			err = commitsS3(ctx, cfg, rep)
		case "checkpoint-s3":
			err = checkpointsS3(ctx, cfg, rep)
		case "dml":
			err = dmlSuite(ctx, cfg, rep)
		case "maintenance":
			err = maintenanceSuite(ctx, cfg, rep)
		case "cdf":
			err = changeFeeds(ctx, cfg, rep)
		case "follow":
			err = followLocal(ctx, cfg, rep)
		case "follow-s3":
			err = followS3(ctx, cfg, rep)
		case "pipeline":
			err = pipelineLag(ctx, cfg, rep)
		case "writers":
			err = writersLocal(ctx, cfg, rep)
		case "writers-s3":
			err = writersS3(ctx, cfg, rep)
		case "datapath-s3":
			err = dataPathS3(ctx, cfg, rep)
		case "datapath-gcs":
			err = dataPathGCS(ctx, cfg, rep)
		case "datapath-azure":
			err = dataPathAzure(ctx, cfg, rep)
		case "snapshot":
			err = bigSnapshot(ctx, cfg, rep)
		case "maintenance-s3":
			err = maintenanceS3(ctx, cfg, rep)
		case "convert":
			err = convertSuite(ctx, cfg, rep)
		case "schema":
			err = schemaSuite(ctx, cfg, rep)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "runner: suite %s: %v\n", s, err)
			rep.failed(s, err)
		}
	}
	rep.elapsed = time.Since(start)
	path, err := rep.path()
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		return 1
	}
	rep.drawChart(ctx, path)
	text := rep.markdown()
	fmt.Print(text)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "runner: wrote %s\n", path)
	if *benchmarks != "" {
		if err := fillBenchmarks(*benchmarks, rep, path); err != nil {
			fmt.Fprintln(os.Stderr, "runner:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "runner: filled the tables of %s\n", *benchmarks)
	}
	return rep.exitStatus()
}

// repoRoot finds the lakelog module's folder from the working directory.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("runner: go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("runner: run from inside the lakelog repository")
	}
	return filepath.Dir(mod), nil
}

// progress prints what the runner is doing to stderr.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
