package cdctest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lakelog/lakelog/objstore/cloudtest"
)

// Worker is a Kafka Connect worker of a test's own (distributed mode,
// its own group and storage topics on the session's Kafka, Debezium as
// its plugin, a REST port of its own), which the test may SIGKILL and
// start again: the session's worker is shared by other tests.
type Worker struct {
	t    testing.TB
	dir  string
	jars string
	port int
	log  *os.File

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// pipelineJars is the folder of the cached jars .ci/pipeline.sh copies
// (connect/, debezium/): LAKELOG_PIPELINE_JARS, else
// $LAKELOG_CACHE/pipeline, else ~/.cache/lakelog/pipeline.
func pipelineJars() string {
	if d := os.Getenv("LAKELOG_PIPELINE_JARS"); d != "" {
		return d
	}
	cache := os.Getenv("LAKELOG_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "lakelog")
	}
	return filepath.Join(cache, "pipeline")
}

// StartConnect starts a worker of the test's own and waits until its
// REST API lists Debezium's Postgres connector; it is killed when the
// test ends. The offsets Debezium commits are flushed every flush: what
// it streamed after the last flush is streamed again after a SIGKILL.
func (s Services) StartConnect(t testing.TB, flush time.Duration) *Worker {
	t.Helper()
	jars := pipelineJars()
	for _, sub := range []string{"connect", "debezium"} {
		if _, err := os.Stat(filepath.Join(jars, sub)); err != nil {
			cloudtest.Require(t, "LAKELOG_PIPELINE_JARS", "the cached Kafka Connect and Debezium jars ("+filepath.Join(jars, sub)+" is missing)")
		}
	}
	if _, err := exec.LookPath("java"); err != nil {
		cloudtest.Require(t, "LAKELOG_JAVA", "Java for Kafka Connect (java is not on PATH)")
	}
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(jars, "debezium"), filepath.Join(plugins, "debezium")); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	name := strings.ReplaceAll(cloudtest.Name("connect-"), "_", "-")
	props := []string{
		"bootstrap.servers=" + s.Brokers,
		"group.id=" + name,
		fmt.Sprintf("listeners=http://127.0.0.1:%d", port),
		"key.converter=org.apache.kafka.connect.json.JsonConverter",
		"value.converter=org.apache.kafka.connect.json.JsonConverter",
		"config.storage.topic=" + name + "-configs",
		"offset.storage.topic=" + name + "-offsets",
		"status.storage.topic=" + name + "-status",
		"config.storage.replication.factor=1",
		"offset.storage.replication.factor=1",
		"status.storage.replication.factor=1",
		fmt.Sprintf("offset.flush.interval.ms=%d", flush.Milliseconds()),
		// A worker that comes back gets its tasks at once, instead of
		// after the 5 minutes the group waits for a lost member.
		"scheduled.rebalance.max.delay.ms=0",
		"plugin.path=" + plugins,
	}
	if err := os.WriteFile(filepath.Join(dir, "worker.properties"), []byte(strings.Join(props, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "connect.log"))
	if err != nil {
		t.Fatal(err)
	}
	w := &Worker{t: t, dir: dir, jars: jars, port: port, log: log}
	t.Cleanup(func() {
		w.Kill()
		log.Close()
	})
	w.Start()
	return w
}

// URL is the worker's REST URL.
func (w *Worker) URL() string { return fmt.Sprintf("http://127.0.0.1:%d", w.port) }

// Start starts the worker's process (again, after Kill) and waits until
// its REST API answers with Debezium's connector.
func (w *Worker) Start() {
	w.t.Helper()
	w.mu.Lock()
	cmd := exec.Command("java", "-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=info", "-cp", filepath.Join(w.jars, "connect", "*"),
		"org.apache.kafka.connect.cli.ConnectDistributed", filepath.Join(w.dir, "worker.properties"))
	cmd.Stdout, cmd.Stderr = w.log, w.log
	if err := cmd.Start(); err != nil {
		w.mu.Unlock()
		w.t.Fatal(err)
	}
	w.cmd, w.done = cmd, make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(w.done)
	done := w.done
	w.mu.Unlock()
	deadline := time.Now().Add(120 * time.Second)
	for {
		resp, err := http.Get(w.URL() + "/connector-plugins")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), "PostgresConnector") {
				return
			}
		}
		select {
		case <-done:
			w.t.Fatalf("Kafka Connect exited at start; the end of its log:\n%s", w.LogTail(30))
		default:
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("Kafka Connect did not answer within 120 s; the end of its log:\n%s", w.LogTail(30))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Kill ends the worker's process with SIGKILL, as a crash does, and
// waits for it to be gone.
func (w *Worker) Kill() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cmd == nil {
		return
	}
	w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.done
	fmt.Fprintf(w.log, "--- test: SIGKILL ---\n")
	w.cmd = nil
}

// WaitStreaming waits until the worker's Debezium task streams changes
// since its last start ("Processing messages" in its log after the last
// SIGKILL), failing the test after wait.
func (w *Worker) WaitStreaming(wait time.Duration) {
	w.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		b, _ := os.ReadFile(w.log.Name())
		text := string(b)
		if i := strings.LastIndex(text, "--- test: SIGKILL ---"); i >= 0 {
			text = text[i:]
		}
		if strings.Contains(text, "Processing messages") {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("Debezium did not stream within %s of the worker's start; the end of its log:\n%s", wait, w.LogTail(30))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// LogTail is the last n lines of the worker's log.
func (w *Worker) LogTail(n int) string {
	b, _ := os.ReadFile(w.log.Name())
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// WaitSlotInactive waits until no process streams from the replication
// slot (the walsender of a killed worker has gone), so that a restarted
// connector can take it.
func (s Services) WaitSlotInactive(t testing.TB, slot string, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		out, err := s.PsqlErr(fmt.Sprintf("select count(*) from pg_replication_slots where slot_name = '%s' and active", slot))
		if err == nil && strings.TrimSpace(out) == "0" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replication slot %s is still in use after %s", slot, wait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
