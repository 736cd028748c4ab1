package cdc

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
)

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "pipeline.yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c, err := LoadConfig(write("brokers: [k:9092]\nconnector: pg\nvariable_numeric: decimal(38,6)\ntables:\n  - {topic: pg.public.t, bronze: /b, silver: /s, key: [id]}\n"))
	if err != nil || c.Tables[0].Key[0] != "id" || c.transactionTopic(c.Tables[0]) != "pg.transaction" {
		t.Fatalf("%+v %v", c, err)
	}
	if p := c.TableProperties(); p[actions.PropAutoCompact] != "true" || c.Vacuum.interval() != DefaultVacuumInterval || c.Vacuum.Bronze {
		t.Fatalf("defaults: %v, vacuum %+v", p, c.Vacuum)
	}
	// Deletion vectors: not named by default (Silver creates new tables
	// with them and leaves existing ones), on silver only when said.
	if _, ok := c.SilverProperties()[actions.PropEnableDeletionVectors]; ok {
		t.Fatalf("default silver properties: %v", c.SilverProperties())
	}
	for text, want := range map[string]string{"true": "true", "false": "false"} {
		c, err := LoadConfig(write("brokers: [k:9092]\ndeletion_vectors: " + text + "\ntables:\n  - {topic: pg.public.t, bronze: /b, silver: /s}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.SilverProperties()[actions.PropEnableDeletionVectors]; got != want || c.TableProperties()[actions.PropEnableDeletionVectors] != "" {
			t.Fatalf("deletion_vectors: %s: silver %q, bronze %v", text, got, c.TableProperties())
		}
	}
	c, err = LoadConfig(write("brokers: [k:9092]\nauto_compact: false\nproperties: {delta.deletedFileRetentionDuration: interval 1 hour}\nvacuum: {interval: 0s, retention: 2h, bronze: true}\ntables:\n  - {topic: pg.public.t, bronze: /b, silver: /s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.TableProperties(); p[actions.PropAutoCompact] != "false" || p[actions.PropDeletedFileRetentionDuration] != "interval 1 hour" ||
		c.Vacuum.interval() != 0 || c.Vacuum.Retention != 2*time.Hour || !c.Vacuum.Bronze {
		t.Fatalf("%v, vacuum %+v", p, c.Vacuum)
	}
	for text, want := range map[string]string{
		"brokers: [k]\nproperties: {delta.deletedFileRetentionDuration: soon}\ntables:\n  - {topic: t, bronze: b, silver: s}\n": "delta.deletedFileRetentionDuration",
		"brokers: [k]\ndeletion_vectors: sometimes\ntables:\n  - {topic: t, bronze: b, silver: s}\n":                            "line 2: cannot unmarshal",
		"brokers: [k]\nvacuum: {interval: often}\ntables:\n  - {topic: t, bronze: b, silver: s}\n":                              "often",
		"brokers: [k]\nvacuum: {retention: -1h}\ntables:\n  - {topic: t, bronze: b, silver: s}\n":                               "negative",
		"tables: []\n":                            "no brokers",
		"brokers: [k]\n":                          "no tables",
		"brokers: [k]\nbad: 1\n":                  "field bad not found",
		"brokers: [k]\ntables:\n  - {topic: t}\n": "table 1 needs topic, bronze and silver",
		"brokers: [k]\nvariable_numeric: float\ntables:\n  - {topic: t, bronze: b, silver: s}\n": "string or decimal(38,S)",
	} {
		if _, err := LoadConfig(write(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

// The supervisor restarts a failing stage with backoff, stops one whose
// error needs an operator, and stops cleanly when cancelled.
func TestSupervise(t *testing.T) {
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	var runs atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		supervise(ctx, log, func(ctx context.Context) error {
			if runs.Add(1) < 3 {
				return errors.New("broker went away")
			}
			<-ctx.Done()
			return nil
		})
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for runs.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the supervisor did not stop")
	}
	if runs.Load() != 3 {
		t.Errorf("%d runs, want 3", runs.Load())
	}
	runs.Store(0)
	supervise(context.Background(), log, func(context.Context) error {
		runs.Add(1)
		return &SchemaChangeError{Column: "c", Change: "x"}
	})
	if runs.Load() != 1 {
		t.Errorf("an incompatible change was retried %d times", runs.Load())
	}
}
