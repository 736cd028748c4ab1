package main

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/s3"
)

// maintenanceS3: OPTIMIZE (bin-packing and Z-order) of the maintenance
// suite's table of many small files, and VACUUM of the scale's number of
// unreferenced files beside it, on MinIO, both engines, each on its own
// copy of the table (copied inside MinIO before each run, not timed).
// Both engines read and write through the object store: lakelog's
// fetcher and streaming uploads, its VACUUM's ranged listing and batch
// deletes; delta-rs's object_store.
func maintenanceS3(ctx context.Context, cfg *config, rep *report) error {
	const suite = "maintenance, S3 (MinIO)"
	if cmpOrEnv("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL") == "" {
		return missingServer(rep, "maintenance-s3", "AWS_ENDPOINT_URL")
	}
	if err := ensureBucket(ctx); err != nil {
		return err
	}
	_, _, orphans := maintenanceSizes(cfg.scale)
	small, snap, err := smallFilesTable(ctx, cfg, false)
	if err != nil {
		return err
	}
	run := randomID()
	src := fmt.Sprintf("maint-%s/src", run)
	start := time.Now()
	n, err := uploadTree(ctx, small, src)
	if err != nil {
		return err
	}
	progress("maintenance-s3: uploaded %d files of the small-files table in %s", n, time.Since(start).Round(time.Millisecond))
	rep.note("maintenance on S3: the maintenance suite's table (%d rows in %d files, %.1f MB), copied inside MinIO to a fresh prefix for each run; "+
		"VACUUM deletes %d unreferenced 6-byte files put beside the live ones (retention 0, forced); delta-rs in its full mode",
		snapRows(snap), snap.NumFiles(), float64(snap.SizeInBytes())/(1<<20), orphans)

	engines := []*Engine{cfg.lakelog}
	if cfg.deltars != nil {
		engines = append(engines, cfg.deltars)
	}
	prefix := func(what string, e *Engine) string { return fmt.Sprintf("maint-%s/%s-%s", run, what, e.Name) }
	uri := func(what string, e *Engine) string { return fmt.Sprintf("s3://%s/%s", bucket, prefix(what, e)) }
	both := func(name, what string, mk func(e *Engine) Spec, prep func(e *Engine) error, note func(o *Outcome) string) error {
		row := &Row{Suite: suite, Name: name, Unit: "files"}
		for _, e := range engines {
			o, err := rep.measure(ctx, e, mk(e), func() error { return prep(e) })
			if err != nil {
				return fmt.Errorf("%s: %s: %w", name, e.Name, err)
			}
			if e == cfg.lakelog {
				row.Lakelog, row.LakelogNote = o, note(o)
			} else {
				row.DeltaRS, row.DeltaRSNote = o, note(o)
			}
		}
		rep.add(row)
		return nil
	}
	filesAfter := func(o *Outcome) string {
		if o == nil {
			return ""
		}
		return fmt.Sprintf("%d files after, version %d", o.Files, o.Version)
	}
	copyFor := func(what string) func(e *Engine) error {
		return func(e *Engine) error { return copyPrefix(ctx, src, prefix(what, e)) }
	}
	target := int64(64 << 20)
	if cfg.scale == "full" {
		target = 256 << 20
	}
	err = both(fmt.Sprintf("OPTIMIZE (bin-packing) %d small files, target %d MB", snap.NumFiles(), target>>20), "optimize",
		func(e *Engine) Spec {
			return s3Spec(Spec{Op: "optimize", Table: uri("optimize", e), TargetFileSize: target})
		}, copyFor("optimize"), filesAfter)
	if err != nil {
		return err
	}
	err = both(fmt.Sprintf("Z-order by (id, v) %d small files, target %d MB", snap.NumFiles(), target>>20), "zorder",
		func(e *Engine) Spec {
			return s3Spec(Spec{Op: "optimize", Method: "zorder", Table: uri("zorder", e), TargetFileSize: target})
		}, copyFor("zorder"), filesAfter)
	if err != nil {
		return err
	}
	return both(fmt.Sprintf("VACUUM %d unreferenced files", orphans), "vacuum",
		func(e *Engine) Spec { return s3Spec(Spec{Op: "vacuum", Table: uri("vacuum", e)}) },
		func(e *Engine) error {
			if err := copyPrefix(ctx, src, prefix("vacuum", e)); err != nil {
				return err
			}
			start := time.Now()
			if err := putOrphans(ctx, prefix("vacuum", e), orphans); err != nil {
				return err
			}
			progress("maintenance-s3: put %d unreferenced files for %s in %s", orphans, e.Name, time.Since(start).Round(time.Millisecond))
			// Their modification times must be before VACUUM's cutoff,
			// which is the clock of the moment it runs.
			time.Sleep(1100 * time.Millisecond)
			return nil
		}, func(o *Outcome) string {
			if o == nil {
				return ""
			}
			if o.Count != orphans {
				return fmt.Sprintf("**WRONG: deleted %d files, want %d**", o.Count, orphans)
			}
			return fmt.Sprintf("deleted %d files", o.Count)
		})
}

// objectWorkers is how many requests the runner's own uploads and copies
// have in flight.
const objectWorkers = 32

// forEach runs fn on every item, objectWorkers at a time, and returns the
// first error.
func forEach[T any](items []T, fn func(T) error) error {
	sem := make(chan struct{}, objectWorkers)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, it := range items {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(it); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// uploadTree copies every file under the local folder dir to prefix in
// the benchmark bucket, keeping the relative paths.
func uploadTree(ctx context.Context, dir, prefix string) (int, error) {
	var rels []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		rels = append(rels, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return 0, err
	}
	st, err := s3.New(ctx, bucket, prefix)
	if err != nil {
		return 0, err
	}
	return len(rels), forEach(rels, func(rel string) error {
		f, err := os.Open(filepath.Join(dir, rel))
		if err != nil {
			return err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return err
		}
		if err := st.Put(ctx, rel, f, objstore.PutOptions{Size: info.Size()}); err != nil {
			return fmt.Errorf("runner: upload %s: %w", rel, err)
		}
		return nil
	})
}

// copyPrefix copies every object under src to dst inside the benchmark
// bucket (server-side copies), after deleting what dst held.
func copyPrefix(ctx context.Context, src, dst string) error {
	st, err := s3.New(ctx, bucket, "")
	if err != nil {
		return err
	}
	var old, keys []string
	for o, err := range st.List(ctx, dst+"/", "") {
		if err != nil {
			return err
		}
		old = append(old, o.Key)
	}
	if _, err := objstore.DeleteKeys(ctx, st, old, objstore.DeleteOptions{}); err != nil {
		return err
	}
	for o, err := range st.List(ctx, src+"/", "") {
		if err != nil {
			return err
		}
		keys = append(keys, o.Key)
	}
	return forEach(keys, func(k string) error {
		to := dst + "/" + strings.TrimPrefix(k, src+"/")
		_, err := st.Client().CopyObject(ctx, &s3sdk.CopyObjectInput{Bucket: new(bucket), Key: &to, CopySource: new((&url.URL{Path: bucket + "/" + k}).EscapedPath())})
		if err != nil {
			return fmt.Errorf("runner: copy %s to %s: %w", k, to, err)
		}
		return nil
	})
}

// putOrphans puts n small files no version references under the table at
// prefix, in its partition folders, as the maintenance suite does on disk.
func putOrphans(ctx context.Context, prefix string, n int64) error {
	st, err := s3.New(ctx, bucket, prefix)
	if err != nil {
		return err
	}
	keys := make([]string, n)
	for i := range n {
		keys[i] = fmt.Sprintf("%s/part-orphan-%06d.parquet", workload.P(i), i)
	}
	return forEach(keys, func(k string) error {
		return st.Put(ctx, k, strings.NewReader("orphan"), objstore.PutOptions{Size: 6})
	})
}
