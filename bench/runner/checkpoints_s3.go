package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/s3"
)

// checkpointsS3: open a table of a 1M-file (full) or 100k-file (small)
// checkpoint, without and with the files' stats, from local disk and from
// MinIO, both engines, each from the checkpoint it wrote itself. The
// tables of the checkpoint suite are reused when it ran before in the same
// work folder (-work, -keep); otherwise the log is synthesised and each
// engine writes its checkpoint (setup, not reported). To MinIO go the
// newest checkpoint, _last_checkpoint and the commits from the
// checkpoint's version on: a table whose older log was cleaned up, as
// both engines read it (they list from _last_checkpoint).
func checkpointsS3(ctx context.Context, cfg *config, rep *report) error {
	const suite = "checkpoint open, disk and S3 (MinIO)"
	spec := logSpec(cfg.scale)
	dir := filepath.Join(cfg.work, "checkpoint")
	engines := []*Engine{cfg.lakelog}
	if cfg.deltars != nil {
		engines = append(engines, cfg.deltars)
	}
	table := func(e *Engine) string { return filepath.Join(dir, e.Name) }
	reused := true
	for _, e := range engines {
		if _, err := newestCheckpoint(table(e)); err != nil {
			reused = false
		}
	}
	if !reused {
		src := filepath.Join(dir, "synthetic")
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		start := time.Now()
		if err := workload.SynthesizeLog(ctx, src, spec); err != nil {
			return err
		}
		for _, e := range engines {
			if err := workload.LinkTable(src, table(e)); err != nil {
				return err
			}
			if _, err := run(ctx, e, Spec{Op: "checkpoint", Table: table(e)}); err != nil {
				return err
			}
		}
		progress("checkpoint-s3: built and checkpointed the tables in %s", time.Since(start).Round(time.Millisecond))
	}
	rep.note("checkpoint open: the checkpoint suite's tables (%d active files with JSON stats, one partition column), %s; "+
		"each engine opens the checkpoint it wrote; on S3 the table holds the newest checkpoint, _last_checkpoint and the commits from its version on",
		spec.Files(), map[bool]string{true: "reused from the checkpoint suite's run", false: "built for this suite"}[reused])

	s3ok := os.Getenv("AWS_ENDPOINT_URL") != "" || os.Getenv("AWS_ENDPOINT_URL_S3") != ""
	uris := map[string]string{}
	if s3ok {
		if err := ensureBucket(ctx); err != nil {
			return err
		}
		run := randomID()
		for _, e := range engines {
			uri := fmt.Sprintf("s3://%s/%s/checkpoint-%s", bucket, run, e.Name)
			start := time.Now()
			n, err := uploadLogTail(ctx, table(e), run+"/checkpoint-"+e.Name)
			if err != nil {
				return err
			}
			progress("checkpoint-s3: uploaded %d log files of %s in %s", n, e.Name, time.Since(start).Round(time.Millisecond))
			uris[e.Name] = uri
		}
	} else {
		rep.note("checkpoint open on S3: skipped, AWS_ENDPOINT_URL is not set (source .ci/services.sh && services_start)")
	}

	type place struct {
		name string
		uri  func(e *Engine) string
		spec func(Spec) Spec
	}
	places := []place{{"local disk", table, func(s Spec) Spec { return s }}}
	if s3ok {
		places = append(places, place{"S3 (MinIO)", func(e *Engine) string { return uris[e.Name] }, s3Spec})
	}
	for _, p := range places {
		for _, method := range []string{"", "stats", "loadstats"} {
			name := "open from its own checkpoint, " + p.name
			lnote := "deltalog.Open (stats deferred)"
			switch method {
			case "stats":
				name, lnote = name+", with the files' stats", "deltalog.Open(WithStats()): the stats read with the checkpoint, one pass"
			case "loadstats":
				name, lnote = name+", with the files' stats loaded after", "deltalog.Open, then Snapshot.LoadStats: a second read of the stats column (delta-rs not run again: see the row above)"
			}
			row := &Row{Suite: suite, Name: name, Unit: "files"}
			for _, e := range engines {
				if method == "loadstats" && e != cfg.lakelog {
					continue
				}
				o, err := rep.measure(ctx, e, p.spec(Spec{Op: "open", Table: p.uri(e), Method: method}), nil)
				if err != nil {
					return err
				}
				note := ""
				if o != nil && o.Count != int64(spec.Files()) {
					note = fmt.Sprintf("**WRONG: %d files, want %d**", o.Count, spec.Files())
				}
				if e == cfg.lakelog {
					row.Lakelog, row.LakelogNote = o, join(note, lnote)
				} else {
					row.DeltaRS, row.DeltaRSNote = o, join(note, "DeltaTable(): stats loaded with the files")
				}
			}
			rep.add(row)
		}
	}
	return nil
}

// newestCheckpoint is the version of the newest checkpoint in the table's
// log folder.
func newestCheckpoint(table string) (int64, error) {
	lc, err := os.ReadFile(filepath.Join(table, deltalog.LogDir+"_last_checkpoint"))
	if err != nil {
		return -1, err
	}
	var v int64
	if _, err := fmt.Sscanf(strings.TrimPrefix(strings.TrimSpace(string(lc)), `{"version":`), "%d", &v); err != nil {
		// Not the usual field order: find the version field anywhere.
		i := strings.Index(string(lc), `"version":`)
		if i < 0 {
			return -1, fmt.Errorf("runner: %s/_last_checkpoint has no version", table)
		}
		if _, err := fmt.Sscanf(string(lc)[i+len(`"version":`):], "%d", &v); err != nil {
			return -1, fmt.Errorf("runner: %s/_last_checkpoint: %w", table, err)
		}
	}
	return v, nil
}

// uploadLogTail copies the newest checkpoint of the local table, its
// _last_checkpoint and the commits from the checkpoint's version on to
// prefix in the benchmark bucket, 16 files at a time.
func uploadLogTail(ctx context.Context, table, prefix string) (int, error) {
	v, err := newestCheckpoint(table)
	if err != nil {
		return 0, err
	}
	logDir := filepath.Join(table, deltalog.LogDir)
	ents, err := os.ReadDir(logDir)
	if err != nil {
		return 0, err
	}
	var names []string
	for _, ent := range ents {
		name := ent.Name()
		if name == "_last_checkpoint" {
			names = append(names, name)
			continue
		}
		p, ok := deltalog.ParseLogPath(name)
		if ok && p.Version >= v && p.Type != deltalog.Checksum {
			names = append(names, name)
		}
	}
	st, err := s3.New(ctx, bucket, prefix)
	if err != nil {
		return 0, err
	}
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, name := range names {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f, err := os.Open(filepath.Join(logDir, name))
			if err == nil {
				err = st.Put(ctx, deltalog.LogDir+name, f, objstore.PutOptions{})
				f.Close()
			}
			if err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("runner: upload %s: %w", name, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return len(names), first
}
