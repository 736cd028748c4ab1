package cloudio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lakelog/lakelog/objstore"
)

// Retry re-issues a read whose response failed after the SDK had handed
// it over: the body broke off (a reset, an unexpected EOF), stalled, or
// held other bytes than were asked for. The SDKs retry what fails before
// the response (5xx, throttling, a reset while sending); they do not see
// the body being read afterwards.
type Retry struct {
	// Attempts is the number of tries in all, at least 1.
	Attempts int
	// Base and Max bound the backoff: before try k+1 a random wait in
	// [0, min(Max, Base<<k)) ("full jitter").
	Base, Max time.Duration
	// Deadline bounds all tries together; 0 means only ctx does.
	Deadline time.Duration
}

// RetryOf is the retry of reads that p asks for (its zero fields taking
// their defaults).
func RetryOf(p objstore.RetryPolicy) Retry {
	p = p.WithDefaults()
	return Retry{Attempts: p.Attempts, Base: p.BaseDelay, Max: p.MaxDelay, Deadline: p.Deadline}
}

// Do calls fn until it succeeds, fails with an error that is not
// Transient, or the tries or the deadline run out; it returns fn's last
// error.
func (r Retry) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	if r.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Deadline)
		defer cancel()
	}
	for try := 1; ; try++ {
		err := fn(ctx)
		if err == nil || try >= max(r.Attempts, 1) || !Transient(err) || ctx.Err() != nil {
			return err
		}
		if !Sleep(ctx, r.Backoff(try)) {
			return err
		}
	}
}

// Backoff is the wait after the try-th failed try.
func (r Retry) Backoff(try int) time.Duration {
	d := r.Max
	if try < 30 && r.Base<<(try-1) < d {
		d = r.Base << (try - 1)
	}
	if d <= 0 {
		return 0
	}
	return rand.N(d)
}

// Sleep waits for d or until ctx is done, and reports whether it waited.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Transient reports whether err, from reading a response, is worth
// another request: a broken-off body, a reset connection, a stall, a
// network timeout, or a short read. A cancelled or expired context is not.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) && !errors.Is(err, ErrStalled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var sr *ShortReadError
	var ne net.Error
	switch {
	case errors.Is(err, ErrStalled), errors.As(err, &sr),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, net.ErrClosed):
		return true
	case errors.As(err, &ne) && ne.Timeout():
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "connection reset") || strings.Contains(msg, "use of closed network connection")
}

// ShortReadError is a ranged read that returned other bytes than the range
// asked for and the object holds.
type ShortReadError struct {
	Off, N     int64 // the range asked for
	Got        int64 // bytes received
	Start, End int64 // the range the server said it sent (End -1: none)
	Total      int64 // the object's size the server gave, or -1
}

func (e *ShortReadError) Error() string {
	return fmt.Sprintf("short read: asked for %d bytes at %d, got %d (server sent bytes %d-%d of %d)", e.N, e.Off, e.Got, e.Start, e.End, e.Total)
}

// CheckRange checks the answer to a ranged GET of n bytes at off: body,
// with the Content-Range header contentRange. It returns body when it is
// exactly the bytes asked for, up to the object's end, and a
// *ShortReadError otherwise. With no Content-Range the server sent the
// whole object (it may ignore Range): the range is cut from it, and an off
// past its end is io.ErrUnexpectedEOF.
func CheckRange(body []byte, contentRange string, off, n int64) ([]byte, error) {
	if contentRange == "" {
		if off > int64(len(body)) {
			return nil, fmt.Errorf("offset %d beyond size %d: %w", off, len(body), io.ErrUnexpectedEOF)
		}
		b := body[off:]
		return b[:min(n, int64(len(b)))], nil
	}
	start, end, total, ok := parseContentRange(contentRange)
	bad := &ShortReadError{Off: off, N: n, Got: int64(len(body)), Start: start, End: end, Total: total}
	if !ok || start != off || end-start+1 != int64(len(body)) || int64(len(body)) > n {
		return nil, bad
	}
	if int64(len(body)) < n && (total < 0 || end+1 != total) {
		return nil, bad // fewer bytes than asked for, and not because the object ends
	}
	return body, nil
}

// CheckLength checks that a body announced as size bytes (negative:
// unknown) arrived whole.
func CheckLength(body []byte, size int64) error {
	if size >= 0 && int64(len(body)) != size {
		return &ShortReadError{N: size, Got: int64(len(body)), End: -1, Total: size}
	}
	return nil
}

// parseContentRange parses "bytes start-end/total" (total "*": -1).
func parseContentRange(s string) (start, end, total int64, ok bool) {
	start, end, total = -1, -1, -1
	rest, found := strings.CutPrefix(strings.TrimSpace(s), "bytes ")
	if !found {
		return start, end, total, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return start, end, total, false
	}
	a, b, found := strings.Cut(rng, "-")
	if !found {
		return start, end, total, false
	}
	var err1, err2 error
	start, err1 = strconv.ParseInt(a, 10, 64)
	end, err2 = strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || start < 0 || end < start {
		return -1, -1, -1, false
	}
	if tot != "*" {
		t, err := strconv.ParseInt(tot, 10, 64)
		if err != nil {
			return start, end, -1, false
		}
		total = t
	}
	return start, end, total, true
}

// NoBytes is what a GetRange of n > 0 bytes at off that received no byte
// returns, given the object's size: empty at the end, io.ErrUnexpectedEOF
// past it, and a *ShortReadError (which is retried) before it.
func NoBytes(store, key string, off, n, size int64) ([]byte, error) {
	if off < size {
		return nil, fmt.Errorf("%s: getrange %q: %w", store, key, &ShortReadError{Off: off, N: n, End: -1, Total: size})
	}
	return EmptyRange(store, key, off, size)
}

// ReadRangeInto reads the answer to a ranged GET of len(p) bytes at off
// into p: body, with the Content-Range header contentRange. It is
// CheckRange for a read into the caller's buffer: it returns the count
// when the body is exactly the bytes asked for, up to the object's end,
// and a *ShortReadError otherwise (an error of the body itself is
// returned as it is). With no Content-Range the server sent the whole
// object: the range is cut from it, and an off past its end is
// io.ErrUnexpectedEOF. An empty body returns 0 and no error, whatever
// the header says; the caller asks the object's size to tell the end
// from a short read (NoBytes).
func ReadRangeInto(body io.Reader, contentRange string, off int64, p []byte) (int, error) {
	n := int64(len(p))
	if contentRange == "" {
		skipped, err := io.CopyN(io.Discard, body, off)
		if err == io.EOF {
			if skipped == 0 && off > 0 {
				return 0, nil // an empty body: the caller asks the size
			}
			return 0, fmt.Errorf("offset %d beyond size %d: %w", off, skipped, io.ErrUnexpectedEOF)
		}
		if err != nil {
			return 0, err
		}
		got, err := io.ReadFull(body, p)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = nil // the object ends first
		}
		return got, err
	}
	got, err := io.ReadFull(body, p)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if got == 0 {
			return 0, nil // an empty body: the caller asks the size
		}
	case err != nil:
		return 0, err
	default:
		var one [1]byte
		if extra, _ := io.ReadFull(body, one[:]); extra > 0 {
			got++ // more bytes than asked for: refused below
		}
	}
	start, end, total, ok := parseContentRange(contentRange)
	if !ok || start != off || end-start+1 != int64(got) || int64(got) > n ||
		int64(got) < n && (total < 0 || end+1 != total) { // fewer bytes than asked for, and not because the object ends
		return 0, &ShortReadError{Off: off, N: n, Got: int64(got), Start: start, End: end, Total: total}
	}
	return got, nil
}
