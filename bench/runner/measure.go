package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Spec is one measured operation, as JSON on the command line of a child
// process: the lakelog child (this binary re-run with -child) and the
// delta-rs child (bench/peers/deltars.py) read the same fields.
type Spec struct {
	Op string `json:"op"`
	// Table is a local path or an s3:// URI.
	Table string `json:"table,omitempty"`
	// Rows is the number of generated rows (gen, append).
	Rows int64 `json:"rows,omitempty"`
	// TargetFileSize is the data files' target size in bytes (append).
	TargetFileSize int64 `json:"target_file_size,omitempty"`
	// Unpartitioned makes append write the data-path table without
	// partition columns (p is then a column of the files): the shape of
	// few large files.
	Unpartitioned bool `json:"unpartitioned,omitempty"`
	// Commits, above 1, makes append write the rows in that many commits
	// of equal id ranges, the first creating the table.
	Commits int `json:"commits,omitempty"`
	// Lo and Hi bound the id range of a selective scan (inclusive).
	Lo int64 `json:"lo,omitempty"`
	Hi int64 `json:"hi,omitempty"`
	// Columns, when set, is the projection of a scan (both engines).
	Columns []string `json:"columns,omitempty"`
	// Method picks the delta-rs read path: "dataset" (pyarrow),
	// "datafusion" (DeltaTable.scan) or "querybuilder" (QueryBuilder SQL).
	Method string `json:"method,omitempty"`
	// N is the number of commits or puts of a loop; Seconds bounds a loop
	// by time instead (concurrent writers).
	N       int     `json:"n,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
	// Partition is the value of p the commits add files to.
	Partition string `json:"partition,omitempty"`
	// Barrier makes the child print {"ready":true} when set up and wait
	// for a line on stdin before it starts the measured part.
	Barrier bool `json:"barrier,omitempty"`
	// Storage are delta-rs storage options (S3).
	Storage map[string]string `json:"storage,omitempty"`
	// Predicate is the condition of a DELETE or UPDATE, or MERGE's ON;
	// Set is UPDATE's column = expression (dml suite).
	Predicate string            `json:"predicate,omitempty"`
	Set       map[string]string `json:"set,omitempty"`
}

// Checksum mirrors workload.Checksum in JSON.
type Checksum struct {
	Rows     int64   `json:"rows"`
	SumID    int64   `json:"sum_id"`
	StrBytes int64   `json:"str_bytes"`
	SumV     float64 `json:"sum_v"`
}

// Latency summarises per-operation latencies in milliseconds.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// summarize computes the latency summary of durations in seconds.
func summarize(ds []float64) *Latency {
	if len(ds) == 0 {
		return nil
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum float64
	for _, d := range s {
		sum += d
	}
	q := func(p float64) float64 { return 1000 * s[min(len(s)-1, int(p*float64(len(s))))] }
	return &Latency{Mean: 1000 * sum / float64(len(s)), P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: 1000 * s[len(s)-1]}
}

// Outcome is what a child prints as its last line of stdout.
type Outcome struct {
	// Seconds is the measured part (see each op), timed by the child
	// itself: process start, imports and setup are outside it.
	Seconds float64 `json:"seconds"`
	// SetupSeconds is the unmeasured part before it that is worth knowing
	// (the table open that precedes a checkpoint write or a listing).
	SetupSeconds float64 `json:"setup_seconds,omitempty"`
	// Count is how many units (rows, files, commits, puts) the measured
	// part processed.
	Count int64 `json:"count"`
	// Checksum of the rows a scan returned (or generated).
	Checksum *Checksum `json:"checksum,omitempty"`
	// Files is the table's number of active files; FilesRead how many a
	// scan opened, -1 when the engine does not say.
	Files     int64 `json:"files,omitempty"`
	FilesRead int64 `json:"files_read,omitempty"`
	// Version is the table version the child ended at.
	Version int64 `json:"version,omitempty"`
	// Attempts is the number of commit attempts (Count plus the retries
	// after losing a race), when the engine says.
	Attempts int64 `json:"attempts,omitempty"`
	// Failed counts commits that gave up (too many lost races); the loop
	// reloads the table and goes on.
	Failed  int64    `json:"failed,omitempty"`
	Latency *Latency `json:"latency_ms,omitempty"`
	// Waits are each landed commit's wait in ms, Ops each landed file's
	// write + commit time in ms (writers suites; see writers.go).
	Waits []float64 `json:"waits_ms,omitempty"`
	Ops   []float64 `json:"ops_ms,omitempty"`
	// PeakKB is the child's own peak resident set (VmHWM of
	// /proc/self/status just before it prints its outcome), in KiB; 0
	// when it cannot say.
	PeakKB int64 `json:"peak_kb,omitempty"`
	// Info is free text (versions, the checkpoint written).
	Info string `json:"info,omitempty"`
	// Changed is the rows a DML operation deleted, updated or inserted,
	// by the engine's own metrics; Metrics are some of those metrics.
	Changed int64          `json:"changed,omitempty"`
	Metrics map[string]any `json:"metrics,omitempty"`

	// Set by the parent:
	PeakMB float64 `json:"peak_mb"`
	// CPUSeconds is the child's user plus system CPU time (rusage), setup
	// included: above Seconds means it used more than one core.
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	// Rate, when set, is the units per second of an aggregate of
	// concurrent children, whose Seconds is the longest child's.
	Rate        float64 `json:"rate,omitempty"`
	WallSeconds float64 `json:"wall_seconds"`
}

// Engine starts child processes of one engine.
type Engine struct {
	Name string
	// Command returns the command line that runs spec.
	Command func(spec []byte) []string
	// Env is added to the children's environment.
	Env []string
}

// child is a started child process.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
	start  time.Time
	engine string
	spec   Spec
}

// startChild starts spec under e. The caller must finish it with wait.
func startChild(ctx context.Context, e *Engine, spec Spec) (*child, error) {
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	argv := e.Command(js)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), e.Env...)
	c := &child{cmd: cmd, engine: e.Name, spec: spec}
	cmd.Stderr = &c.stderr
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.out = bufio.NewReaderSize(stdout, 1<<16)
	c.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("runner: start %s %s: %w", e.Name, spec.Op, err)
	}
	return c, nil
}

// ready waits for the child's {"ready":true} line.
func (c *child) ready() error {
	line, err := c.out.ReadString('\n')
	if err != nil || !strings.Contains(line, `"ready"`) {
		c.cmd.Process.Kill()
		c.cmd.Wait() // collect its stderr for the message
		return c.fail(fmt.Errorf("no ready line (%q): %v", line, err))
	}
	return nil
}

// release lets a child waiting at its barrier go.
func (c *child) release() error {
	_, err := io.WriteString(c.stdin, "go\n")
	return err
}

// wait reads the child's outcome, waits for it to exit and records its
// peak resident set size: the VmHWM the child reports of itself, else the
// kernel's ru_maxrss. ru_maxrss alone is wrong for a child of a large
// parent: Linux carries the high-water mark of the memory the process had
// before exec into it, and Go starts children with vfork, sharing the
// runner's memory until exec, so every child's ru_maxrss is at least the
// runner's own peak (which grows when the runner builds tables). VmHWM
// belongs to the memory the child's program got at exec.
func (c *child) wait() (Outcome, error) {
	c.stdin.Close()
	rest, readErr := io.ReadAll(c.out)
	err := c.cmd.Wait()
	wall := time.Since(c.start)
	if err != nil {
		return Outcome{}, c.fail(err)
	}
	if readErr != nil {
		return Outcome{}, c.fail(readErr)
	}
	lines := strings.Split(strings.TrimSpace(string(rest)), "\n")
	var o Outcome
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &o); err != nil {
		return Outcome{}, c.fail(fmt.Errorf("bad outcome line %q: %w", lines[len(lines)-1], err))
	}
	ru, ok := c.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return Outcome{}, c.fail(errors.New("no rusage"))
	}
	o.PeakMB = float64(ru.Maxrss) / 1024 // Linux reports kilobytes
	if o.PeakKB > 0 {
		o.PeakMB = float64(o.PeakKB) / 1024
	}
	o.CPUSeconds = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	o.WallSeconds = wall.Seconds()
	return o, nil
}

func (c *child) fail(err error) error {
	msg := strings.TrimSpace(c.stderr.String())
	if len(msg) > 2000 {
		msg = "..." + msg[len(msg)-2000:]
	}
	return fmt.Errorf("runner: %s %s: %w\n%s", c.engine, c.spec.Op, err, msg)
}

// run runs spec under e once and returns its outcome.
func run(ctx context.Context, e *Engine, spec Spec) (Outcome, error) {
	c, err := startChild(ctx, e, spec)
	if err != nil {
		return Outcome{}, err
	}
	if spec.Barrier {
		if err := c.ready(); err != nil {
			c.cmd.Process.Kill()
			c.cmd.Wait()
			return Outcome{}, err
		}
		c.release()
	}
	return c.wait()
}

// runGroup runs specs concurrently under e: every child sets up, waits at
// the barrier until all are ready, and then all start at once.
func runGroup(ctx context.Context, e *Engine, specs []Spec) ([]Outcome, error) {
	var cs []*child
	kill := func() {
		for _, c := range cs {
			c.cmd.Process.Kill()
			c.cmd.Wait()
		}
	}
	for _, s := range specs {
		s.Barrier = true
		c, err := startChild(ctx, e, s)
		if err != nil {
			kill()
			return nil, err
		}
		cs = append(cs, c)
	}
	for _, c := range cs {
		if err := c.ready(); err != nil {
			kill()
			return nil, err
		}
	}
	for _, c := range cs {
		c.release()
	}
	var out []Outcome
	var errs []error
	for _, c := range cs {
		o, err := c.wait()
		errs = append(errs, err)
		out = append(out, o)
	}
	return out, errors.Join(errs...)
}
