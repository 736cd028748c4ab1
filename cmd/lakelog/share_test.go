package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakelog/lakelog/sharing"
)

const shareToken = "a-token-of-at-least-32-characters-xyz"

func shareConfig(t *testing.T, table string, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shares.yaml")
	text := fmt.Sprintf(`version: 1
host: 127.0.0.1
port: 18080
accessLog: off
shares:
- name: s
  schemas:
  - name: db
    tables:
    - name: t
      location: %q
      historyShared: true
recipients:
- name: acme
  token: %s
  expirationTime: 2099-01-01T00:00:00Z
  shares: [s]
%s`, table, shareToken, extra)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// syncBuffer is a buffer written by the server's goroutine and read by
// the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestShareServe(t *testing.T) {
	dir := t.TempDir() + "/t"
	if code, _, e := lakelog(t, "create", dir, "--schema", "id long"); code != exitOK {
		t.Fatal(e)
	}
	cfg := shareConfig(t, dir, "")
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"share", "serve", "--config", cfg, "--listen", "127.0.0.1:0"}, strings.NewReader(""), io.Discard, &stderr)
	}()
	addr := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)`)
	var base string
	for range 200 {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			base = "http://" + m[1]
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if base == "" {
		cancel()
		t.Fatalf("no address on stderr: %s", stderr.String())
	}
	resp, err := http.Get(base + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %v", resp, err)
	}
	resp.Body.Close()
	req, _ := http.NewRequest("GET", base+"/delta-sharing/shares/s/schemas/db/tables/t/version", nil)
	req.Header.Set("Authorization", "Bearer "+shareToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Delta-Table-Version") != "0" {
		t.Fatalf("version: %v %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	select {
	case code := <-done:
		if code != exitOK || !strings.Contains(stderr.String(), "stopped") {
			t.Errorf("serve ended with %d: %s", code, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not stop")
	}
}

func TestShareConfigErrors(t *testing.T) {
	dir := t.TempDir() + "/t"
	if code, _, e := lakelog(t, "create", dir, "--schema", "id long"); code != exitOK {
		t.Fatal(e)
	}
	write := func(text string) string {
		p := filepath.Join(t.TempDir(), "shares.yaml")
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	table := fmt.Sprintf("shares:\n- name: s\n  schemas:\n  - name: db\n    tables:\n    - name: t\n      location: %q\n", dir)
	for _, c := range []struct{ text, want string }{
		{"shares: []\n", "'version' must be given"},
		{"version: 2\n", "version 2 is not supported"},
		{"version: 1\nport: 99999\n", "is not a TCP port"},
		{"version: 1\nshraes: []\n", `2:1: unknown key "shraes"`},
		{"version: 1\n" + table + "      histroyShared: true\n", `9:7: unknown key "histroyShared"`},
		{"version: 1\n" + strings.Replace(table, "name: t\n", "name: t.x\n", 1), "7:7: table name \"t.x\" holds '.'"},
		{"version: 1\n" + strings.Replace(table, "name: db", "name: d b", 1), "holds ' '"},
		{"version: 1\n" + table + "    - name: T\n      location: x\n", "table \"T\" is defined twice"},
		{"version: 1\n" + strings.Replace(table, fmt.Sprintf("location: %q\n", dir), "startVersion: 1\n", 1), "has no location"},
		{"version: 1\n" + table + "      startVersion: -1\n", "startVersion -1 is negative"},
		{"version: 1\n" + table + "      changeDataFeedShared: true\n", "changeDataFeedShared needs historyShared"},
		{"version: 1\n" + table + "recipients:\n- name: r\n  shares: [s]\n", "recipient \"r\" has no token"},
		{"version: 1\n" + table + "recipients:\n- name: r\n  token: short\n  shares: [s]\n", "at least 32 are required"},
		{"version: 1\n" + table + "recipients:\n- name: r\n  token: " + shareToken + "\n  shares: [nope]\n", `share "nope" is not defined`},
		{"version: 1\n" + table + "recipients:\n- name: r\n  tokenSha256: zz\n  shares: [s]\n", "64 hex digits"},
		{"version: 1\n" + table + "recipients:\n- name: r\n  token: " + shareToken + "\n  expirationTime: tomorrow\n  shares: [s]\n", "not an RFC 3339 time"},
		{"version: 1\n" + table + "recipients:\n- name: r\n  token: " + shareToken + "\n- name: q\n  token: " + shareToken + "\n", "have the same token"},
		{"version: 1\nport: [1]\n", "shares.yaml:2: cannot unmarshal"},
		{"version: 1\n\t x", "line 2: found a tab character"},
		{"version: 1\n" + strings.Replace(table, dir, dir+"-missing", 1), "table s.db.t"},
	} {
		code, _, errOut := lakelog(t, "share", "serve", "--config", write(c.text))
		if code != exitError || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "shares.yaml") {
			t.Errorf("config %q: exit %d, stderr %q; want %q naming the file", c.text, code, errOut, c.want)
		}
	}
	code, _, errOut := lakelog(t, "share", "serve")
	if code != exitUsage || !strings.Contains(errOut, "--config") {
		t.Errorf("serve without --config: %d %s", code, errOut)
	}
}

func TestShareProfile(t *testing.T) {
	cfg := shareConfig(t, t.TempDir(), "- name: hashed\n  tokenSha256: "+strings.Repeat("ab", 32)+"\n  shares: [s]\n")
	out := filepath.Join(t.TempDir(), "acme.share")
	code, stdout, errOut := lakelog(t, "share", "profile", "acme", "--config", cfg, "--out", out)
	if code != exitOK {
		t.Fatalf("profile: %d %s", code, errOut)
	}
	var p sharing.Profile
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.ShareCredentialsVersion != 1 || p.Endpoint != "http://127.0.0.1:18080/delta-sharing" || p.BearerToken != shareToken || p.ExpirationTime != "2099-01-01T00:00:00Z" {
		t.Errorf("profile %+v (%s)", p, stdout)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Errorf("profile mode %v", fi.Mode())
	}
	code, _, errOut = lakelog(t, "share", "profile", "hashed", "--config", cfg, "--out", out)
	if code != exitError || !strings.Contains(errOut, "--new-token") {
		t.Errorf("profile of a hashed token: %d %s", code, errOut)
	}
	code, stdout, errOut = lakelog(t, "share", "profile", "hashed", "--config", cfg, "--out", out, "--new-token", "--endpoint", "https://share.example.com/ds")
	b, _ = os.ReadFile(out)
	json.Unmarshal(b, &p)
	m := regexp.MustCompile(`tokenSha256: ([0-9a-f]{64})`).FindStringSubmatch(stdout)
	if code != exitOK || m == nil || p.Endpoint != "https://share.example.com/ds" || len(p.BearerToken) != 43 {
		t.Fatalf("profile --new-token: %d %s %s %+v", code, stdout, errOut, p)
	}
	// The printed hash is the new token's: a configuration with it accepts it.
	text, _ := os.ReadFile(cfg)
	c, err := sharing.ParseConfig("x.yaml", bytes.ReplaceAll(text, []byte(strings.Repeat("ab", 32)), []byte(m[1])))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Profile("hashed", "", p.BearerToken); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := lakelog(t, "share", "profile", "nobody", "--config", cfg); code != exitError {
		t.Errorf("profile of an unknown recipient: %d", code)
	}
}
