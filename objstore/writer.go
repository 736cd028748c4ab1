package objstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Writer streams one object into a store. Nothing is visible under the
// key until Close returns nil; Abort, a failed Write or Close, or a
// cancelled context leaves nothing there. Write and Close return the
// store's error once the upload has failed. A Writer is not safe for
// concurrent use; Abort may be called after Close (it then does nothing).
type Writer interface {
	io.Writer
	// Close finishes the upload and makes the object visible. With
	// PutOptions.IfAbsent it fails with ErrExists when the key exists.
	Close() error
	// Abort stops the upload, so that nothing appears under the key.
	Abort()
	// Written is the number of bytes accepted by Write so far.
	Written() int64
}

// WriteOnly is w's Write alone, for a library that would close the
// writer it is given (Parquet's file writer does): the upload is then
// committed or aborted only by its owner.
func WriteOnly(w Writer) io.Writer { return writeOnly{w} }

type writeOnly struct{ w Writer }

func (o writeOnly) Write(p []byte) (int, error) { return o.w.Write(p) }

// WriterStore is implemented by stores with a streaming writer of their
// own; NewWriter uses it when present.
type WriterStore interface {
	NewWriter(ctx context.Context, key string, opts PutOptions) (Writer, error)
}

// writeBuffer sits between the caller's writes and the upload: encoders
// (Parquet) write many small pieces, each of which would otherwise be a
// hand-over to the upload goroutine.
const writeBuffer = 256 << 10

// NewWriter starts a streaming upload of key to s. The store's own Put
// reads the bytes as they are written and uploads them natively: S3 and
// Azure in parts or blocks of their part size, several in flight while
// the next is filled (memory bounded by the parts in flight, 4 × 8 MiB at
// the defaults, and this writer's buffer), GCS through its resumable writer,
// local disk into a temporary file linked into place on Close. A store
// with a writer of its own (WriterStore) is asked for it instead.
func NewWriter(ctx context.Context, s Store, key string, opts PutOptions) (Writer, error) {
	if ws, ok := s.(WriterStore); ok {
		return ws.NewWriter(ctx, key, opts)
	}
	pr, pw := io.Pipe()
	w := &putWriter{key: key, pw: pw, done: make(chan struct{})}
	w.buf = bufio.NewWriterSize(pw, writeBuffer)
	go func() {
		defer close(w.done)
		err := s.Put(ctx, key, pr, opts)
		if err == nil {
			err = errPutReturned // Put must not return before the body ends
		}
		// Unblock a Write waiting on the pipe: the store stopped reading.
		pr.CloseWithError(err)
		w.putErr = err
	}()
	return w, nil
}

// errPutReturned is the upload's outcome when the store's Put returned nil
// before the writer was closed: it read less than was written.
var errPutReturned = errors.New("objstore: the store finished reading before the end of the body")

// errAborted ends the body of an aborted upload, so that Put fails and
// leaves nothing.
var errAborted = errors.New("objstore: upload aborted")

// putWriter feeds a store's Put through a pipe.
type putWriter struct {
	key     string
	pw      *io.PipeWriter
	buf     *bufio.Writer
	n       int64
	done    chan struct{}
	putErr  error // set before done is closed
	once    sync.Once
	closed  bool
	failure error
}

func (w *putWriter) Write(p []byte) (int, error) {
	if w.closed {
		return 0, fmt.Errorf("objstore: write %s: writer closed", w.key)
	}
	if w.failure != nil {
		return 0, w.failure
	}
	n, err := w.buf.Write(p)
	w.n += int64(n)
	if err != nil {
		w.failure = w.cause(err)
		return n, w.failure
	}
	return n, nil
}

func (w *putWriter) Written() int64 { return w.n }

// cause is the error a failed write or flush reports: the store's, when
// the upload ended first (the pipe only says it was closed).
func (w *putWriter) cause(err error) error {
	select {
	case <-w.done:
		if w.putErr != nil && !errors.Is(w.putErr, errPutReturned) {
			return fmt.Errorf("objstore: upload %s: %w", w.key, w.putErr)
		}
	default:
	}
	return fmt.Errorf("objstore: upload %s: %w", w.key, err)
}

func (w *putWriter) Close() error {
	if w.closed {
		return fmt.Errorf("objstore: close %s: writer closed", w.key)
	}
	w.closed = true
	if w.failure == nil {
		if err := w.buf.Flush(); err != nil {
			w.failure = w.cause(err)
		}
	}
	if w.failure != nil {
		w.pw.CloseWithError(errAborted)
		<-w.done
		return w.failure
	}
	w.pw.Close()
	<-w.done
	if w.putErr != nil {
		if errors.Is(w.putErr, errPutReturned) {
			return nil // Put returned nil: the whole body was read and stored
		}
		return fmt.Errorf("objstore: upload %s: %w", w.key, w.putErr)
	}
	return nil
}

func (w *putWriter) Abort() {
	w.once.Do(func() {
		if w.closed && w.failure == nil {
			return // closed successfully: the object stays
		}
		w.closed = true
		w.pw.CloseWithError(errAborted)
		<-w.done
	})
}

// BodyReader wraps the body of a Put and remembers the first error other
// than io.EOF that it returned, so that a store can tell a failing body
// from a failing upload (a failing body must never publish an object).
type BodyReader struct {
	R   io.Reader
	Err error
}

// Read implements io.Reader.
func (b *BodyReader) Read(p []byte) (int, error) {
	n, err := b.R.Read(p)
	if err != nil && err != io.EOF && b.Err == nil {
		b.Err = err
	}
	return n, err
}
