package deltalog

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// VersionCommit is one version of a commit range: what its commit file
// holds and when it was committed.
type VersionCommit struct {
	Version int64
	// Timestamp is the version's time as time travel reads it: the
	// in-commit timestamp where the table records them, else the commit
	// file's modification time made increasing as Spark makes it.
	Timestamp time.Time
	// Actions are the commit's actions in file order, commitInfo included.
	Actions []actions.Action
	// CommitInfo is the commit's commitInfo, nil when it has none.
	CommitInfo *actions.CommitInfo
}

// commitsAhead is how many commit files a range reads ahead of the one it
// yields, concurrently: object stores reward requests in flight.
const commitsAhead = 8

// Commits streams the commits of versions from through to, inclusive (to
// < 0: the latest version), in version order. Commit files are fetched up
// to commitsAhead ahead, in parallel, and decoded and yielded one at a
// time, so memory does not grow with the range. History and the change
// data feed read the log through it.
//
// Errors, each ending the sequence: from beyond the latest version, or a
// version whose commit was removed by log cleanup, is ErrVersionNotFound;
// a commit missing between two others, or one that does not decode, is
// ErrLogCorrupt naming the file.
func Commits(ctx context.Context, store objstore.Store, root string, from, to int64) iter.Seq2[*VersionCommit, error] {
	return func(yield func(*VersionCommit, error) bool) {
		t := newTable(store, root)
		if from < 0 || (to >= 0 && to < from) {
			yield(nil, fmt.Errorf("deltalog: commits of %s: bad range %d to %d", t.display(), from, to))
			return
		}
		l, err := t.list(ctx, -1)
		if err != nil {
			yield(nil, err)
			return
		}
		if l.maxVersion < 0 {
			yield(nil, &notTableError{table: t.display()})
			return
		}
		if err := t.fillListingGaps(ctx, l); err != nil {
			yield(nil, err)
			return
		}
		if to < 0 {
			to = l.maxVersion
		}
		if from > l.maxVersion || to > l.maxVersion {
			yield(nil, fmt.Errorf("deltalog: %w: commits %d to %d of %s requested, latest is %d", ErrVersionNotFound, from, to, t.display(), l.maxVersion))
			return
		}
		oldest := l.maxVersion
		for v := range l.commits {
			oldest = min(oldest, v)
		}
		for v := from; v <= to; v++ {
			if _, ok := l.commits[v]; ok {
				continue
			}
			if v < oldest {
				yield(nil, fmt.Errorf("deltalog: %w: the commit of version %d of %s was removed by log cleanup (the oldest kept is %d)", ErrVersionNotFound, v, t.display(), oldest))
			} else {
				yield(nil, fmt.Errorf("deltalog: %w: version %d is missing from %s", ErrLogCorrupt, v, t.display()))
			}
			return
		}
		clock := commitInfoClock(l)

		files := make([]logFile, 0, to-from+1)
		for v := from; v <= to; v++ {
			files = append(files, l.commits[v])
		}
		v := from
		for as, err := range t.readCommitsAhead(ctx, files) {
			if err != nil {
				yield(nil, err)
				return
			}
			vc := &VersionCommit{Version: v, Actions: as}
			for i := range as {
				if ci := as[i].CommitInfo; ci != nil {
					vc.CommitInfo = ci
					break
				}
			}
			vc.Timestamp = clock.at(v, vc.CommitInfo)
			if !yield(vc, nil) {
				return
			}
			v++
		}
		if err := ctx.Err(); err != nil {
			yield(nil, fmt.Errorf("deltalog: commits of %s: %w", t.display(), err))
		}
	}
}

// readCommitsAhead reads and decodes files, yielding each one's actions in
// the order given. Reads run ahead of the consumer, up to commitsAhead at
// once, each in its own goroutine: on an object store the commits after a
// checkpoint cost one round trip's latency per commitsAhead, not per
// commit. The first error is yielded and ends the sequence; stopping
// early cancels the reads in flight.
func (t *table) readCommitsAhead(ctx context.Context, files []logFile) iter.Seq2[[]actions.Action, error] {
	return func(yield func([]actions.Action, error) bool) {
		if len(files) == 1 { // no goroutine for the common single commit
			yield(t.readCommit(ctx, files[0]))
			return
		}
		type pending struct {
			done chan struct{}
			as   []actions.Action
			err  error
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		queue := make(chan *pending, commitsAhead)
		go func() {
			defer close(queue)
			for _, f := range files {
				p := &pending{done: make(chan struct{})}
				select {
				case queue <- p:
				case <-ctx.Done():
					return
				}
				go func() {
					defer close(p.done)
					p.as, p.err = t.readCommit(ctx, f)
				}()
			}
		}()
		n := 0
		for p := range queue {
			<-p.done
			if p.err != nil {
				yield(nil, p.err)
				return
			}
			if !yield(p.as, nil) {
				return
			}
			n++
		}
		if n < len(files) {
			yield(nil, fmt.Errorf("deltalog: read commits of %s: %w", t.display(), context.Cause(ctx)))
		}
	}
}
