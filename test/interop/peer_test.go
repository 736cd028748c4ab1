package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Engines, as peer.py names them.
const (
	deltaRS = "deltars"
	spark   = "spark"
)

// Timeouts. Spark's first start on a machine downloads the Delta jars.
const (
	startTimeout   = 5 * time.Minute
	requestTimeout = 3 * time.Minute
	stopTimeout    = 30 * time.Second
)

// peers holds one worker per engine, started on first use and stopped by
// TestMain.
var peers = map[string]*peer{
	deltaRS: {engine: deltaRS},
	spark:   {engine: spark},
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, p := range peers {
		p.stop()
	}
	os.Exit(code)
}

// peer is one peer.py worker process. Requests are serialised: the
// worker serves one at a time.
type peer struct {
	engine string
	once   sync.Once

	// Set by start.
	startErr error
	missing  bool // the engine is not installed, as opposed to broken
	versions map[string]string
	started  time.Duration

	mu struct {
		sync.Mutex
		cmd    *exec.Cmd
		stdin  io.WriteCloser
		lines  chan string // response lines; closed at EOF
		stderr *tailBuffer
		dead   error // set when the worker died or was killed
	}
}

// request is a peer.py request; see peer.py for the fields of each op.
type request struct {
	Op             string            `json:"op"`
	Path           string            `json:"path,omitempty"`
	Version        *int64            `json:"version,omitempty"`
	EndVersion     *int64            `json:"end_version,omitempty"`
	StartTimestamp string            `json:"starting_timestamp,omitempty"`
	EndTimestamp   string            `json:"ending_timestamp,omitempty"`
	Where          string            `json:"where,omitempty"`
	Reader         string            `json:"reader,omitempty"`
	Out            string            `json:"out,omitempty"`
	Input          string            `json:"input,omitempty"`
	Mode           string            `json:"mode,omitempty"`
	PartitionBy    []string          `json:"partition_by,omitempty"`
	Configuration  map[string]string `json:"configuration,omitempty"`
	StorageOptions map[string]string `json:"storage_options,omitempty"`
	Statements     []string          `json:"statements,omitempty"`
	Query          string            `json:"query,omitempty"`
	Pairs          [][2]string       `json:"pairs,omitempty"`
	// KeepGoing: sql_rows answers a failing statement with its error and
	// runs the next.
	KeepGoing bool `json:"keep_going,omitempty"`
}

// response is a peer.py response.
type response struct {
	OK        bool              `json:"ok"`
	Missing   bool              `json:"missing"`
	Error     string            `json:"error"`
	Traceback string            `json:"traceback"`
	Engine    string            `json:"engine"`
	Versions  map[string]string `json:"versions"`
	Rows      int64             `json:"rows"`
	Version   int64             `json:"version"`
	Columns   []string          `json:"columns"`
	Result    [][]*string       `json:"result"`
	// StatementRows are sql_rows' answer: each statement's columns and
	// rows.
	StatementRows []struct {
		Columns []string `json:"columns"`
		Rows    [][]any  `json:"rows"`
		Error   string   `json:"error"` // with KeepGoing
		Seconds float64  `json:"seconds"`
	} `json:"statement_rows"`
}

// requirePeer returns the running worker of engine, starting it on first
// use, or ends the test when the engine is not installed: with t.Fatal
// under CI (CI=true), with t.Skip when LAKELOG_SKIP_PEERS=1, and otherwise
// with t.Fatal and the commands that install it. An engine that is
// installed but fails to start always fails the test.
func requirePeer(t testing.TB, engine string) *peer {
	t.Helper()
	p := peers[engine]
	if p == nil {
		t.Fatalf("interop: unknown peer engine %q", engine)
	}
	p.once.Do(p.start)
	switch {
	case p.startErr == nil:
		return p
	case !p.missing:
		t.Fatalf("interop: the %s peer is installed but did not start: %v", engine, p.startErr)
	case os.Getenv("CI") == "true":
		t.Fatalf("interop: the %s peer is missing under CI: .ci/run must install it (source .ci/peers.sh; peers_install; peers_env): %v", engine, p.startErr)
	case os.Getenv("LAKELOG_SKIP_PEERS") == "1":
		t.Skipf("interop: the %s peer is missing and LAKELOG_SKIP_PEERS=1: skipping (%v)", engine, p.startErr)
	default:
		t.Fatalf("interop: the %s peer is missing: %v\nInstall the peers (a Python venv with delta-rs, pyspark and delta-spark; Spark needs Java 17) with\n"+
			"\tsource .ci/peers.sh; peers_install; peers_env\n"+
			"in this shell, or set LAKELOG_SKIP_PEERS=1 to skip the interop tests.", engine, p.startErr)
	}
	return nil
}

// start launches the worker and waits for its greeting.
func (p *peer) start() {
	begin := time.Now()
	python := os.Getenv("LAKELOG_PYTHON")
	if python == "" {
		p.missing, p.startErr = true, errors.New("LAKELOG_PYTHON is not set")
		return
	}
	if _, err := exec.LookPath(python); err != nil {
		p.missing, p.startErr = true, fmt.Errorf("LAKELOG_PYTHON=%s: %w", python, err)
		return
	}
	script, err := filepath.Abs("peer.py")
	if err != nil {
		p.startErr = err
		return
	}
	cmd := exec.Command(python, "-u", script, p.engine)
	cmd.Env = append(os.Environ(), "PYTHONWARNINGS=ignore", "PYSPARK_PYTHON="+python)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		p.startErr = err
		return
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		p.startErr = err
		return
	}
	stderr := &tailBuffer{max: 64 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		p.startErr = fmt.Errorf("start %s %s: %w", python, script, err)
		return
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	p.mu.cmd, p.mu.stdin, p.mu.lines, p.mu.stderr = cmd, stdin, lines, stderr

	p.mu.Lock()
	greeting, err := p.receiveLocked(startTimeout)
	p.mu.Unlock()
	switch {
	case err != nil:
		p.startErr = err
	case greeting.Missing:
		p.missing, p.startErr = true, errors.New(greeting.Error)
		p.stop()
	case !greeting.OK:
		p.startErr = fmt.Errorf("%s\n%s\nworker stderr:\n%s", greeting.Error, greeting.Traceback, stderr.String())
		p.stop()
	default:
		p.versions = greeting.Versions
		p.started = time.Since(begin)
	}
}

// do sends one request and returns the response. A response with ok false
// is an error carrying the peer's message and traceback.
func (p *peer) do(req request) (*response, error) {
	return p.doWithin(req, requestTimeout)
}

// doWithin is do for a request that may take up to timeout (a batch of
// many statements).
func (p *peer) doWithin(req request, timeout time.Duration) (*response, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.dead != nil {
		return nil, p.mu.dead
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := p.mu.stdin.Write(append(b, '\n')); err != nil {
		p.killLocked(fmt.Errorf("write to the %s worker: %w", p.engine, err))
		return nil, p.mu.dead
	}
	resp, err := p.receiveLocked(timeout)
	if err != nil {
		return nil, err
	}
	if !resp.OK {
		return resp, &peerError{engine: p.engine, op: req.Op, msg: resp.Error, traceback: resp.Traceback}
	}
	return resp, nil
}

// call is do for requests that must succeed.
func (p *peer) call(t testing.TB, req request) *response {
	t.Helper()
	resp, err := p.do(req)
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	return resp
}

// peerError is a request the peer refused or failed.
type peerError struct {
	engine, op, msg, traceback string
}

func (e *peerError) Error() string {
	return fmt.Sprintf("%s %s: %s\n%s", e.engine, e.op, e.msg, e.traceback)
}

// receiveLocked reads one response line, killing the worker when none
// comes within timeout or the line is not a response.
func (p *peer) receiveLocked(timeout time.Duration) (*response, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case line, ok := <-p.mu.lines:
		if !ok {
			err := fmt.Errorf("the %s worker exited: %v\nworker stderr:\n%s", p.engine, p.mu.cmd.Wait(), p.mu.stderr.String())
			p.mu.dead = err
			return nil, err
		}
		resp := &response{}
		if err := json.Unmarshal([]byte(line), resp); err != nil {
			p.killLocked(fmt.Errorf("the %s worker wrote %q, not a response: %w", p.engine, line, err))
			return nil, p.mu.dead
		}
		return resp, nil
	case <-timer.C:
		p.killLocked(fmt.Errorf("the %s worker did not answer within %v", p.engine, timeout))
		return nil, p.mu.dead
	}
}

// killLocked kills the worker (the JVM of Spark's worker exits when its
// parent's pipe closes) and records why.
func (p *peer) killLocked(why error) {
	_ = p.mu.cmd.Process.Kill()
	_ = p.mu.cmd.Wait()
	p.mu.dead = fmt.Errorf("%w\nworker stderr:\n%s", why, p.mu.stderr.String())
}

// stop ends the worker: it closes the worker's stdin, which makes it stop
// its engine and exit, and kills it if it has not exited in time.
func (p *peer) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.cmd == nil || p.mu.dead != nil {
		return
	}
	_ = p.mu.stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- p.mu.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(stopTimeout):
		_ = p.mu.cmd.Process.Kill()
		<-exited
	}
	p.mu.dead = fmt.Errorf("the %s worker was stopped", p.engine)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = b.buf[over:]
		if i := bytes.IndexByte(b.buf, '\n'); i >= 0 {
			b.buf = b.buf[i+1:]
		}
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimRight(string(b.buf), "\n")
}

// TestPeerVersions logs the peer versions and their start times, so that a
// run's output says what it tested against.
func TestPeerVersions(t *testing.T) {
	for _, engine := range []string{deltaRS, spark} {
		t.Run(engine, func(t *testing.T) {
			p := requirePeer(t, engine)
			t.Logf("%s: %v (started in %v)", engine, p.versions, p.started.Round(time.Millisecond))
		})
	}
}
