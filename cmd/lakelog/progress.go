package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress lines: long work shows one line on stderr, rewritten in place,
// when stderr is a terminal and --quiet is not given; nothing is printed
// otherwise, and stdout never changes. The line says what is done of the
// total, the rate and, once the rate is known, the time left:
//
//	optimize: rows rewritten: 3 of 12 (25%), 0.5/s, about 18s left, 6s
var (
	// progressDelay is how long work runs before its line shows, so that
	// quick commands print none.
	progressDelay = 2 * time.Second
	// progressEvery is how often a line is rewritten at most.
	progressEvery = 250 * time.Millisecond
)

// terminal is a writer that says whether it is a terminal (the tests'
// stand-in for one).
type terminal interface{ IsTerminal() bool }

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	if t, ok := w.(terminal); ok {
		return t.IsTerminal()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// meter is a progress line on a terminal's stderr. A nil *meter does
// nothing.
type meter struct {
	mu      sync.Mutex
	w       io.Writer
	what    string
	start   time.Time
	last    time.Time
	printed bool
}

// meter returns a progress line when the verb shows one (stderr is a
// terminal, no --quiet), nil otherwise.
func (c *call) meter() *meter {
	if c.on("quiet") || !isTerminal(c.stderr) {
		return nil
	}
	return &meter{w: c.stderr}
}

// set reports done of total (total 0: unknown) for the work named what,
// extra (if any) after the counts; a new what starts its clock again.
func (m *meter) set(what string, done, total int64, unit, extra string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if what != m.what {
		m.what, m.start, m.last = what, now, time.Time{}
	}
	el := now.Sub(m.start)
	if el < progressDelay && !m.printed || now.Sub(m.last) < progressEvery && done < total {
		return
	}
	m.last = now
	fmt.Fprint(m.w, "\r"+meterLine(what, done, total, unit, extra, el)+"\x1b[K")
	m.printed = true
}

// clear removes the line.
func (m *meter) clear() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.printed {
		fmt.Fprint(m.w, "\r\x1b[K")
		m.printed = false
	}
}

// meterLine is a progress line's text: done of total, extra, the rate
// and the time left (bytes in units of 1024 when unit is "B").
func meterLine(what string, done, total int64, unit, extra string, el time.Duration) string {
	num := func(n int64) string {
		if unit == "B" {
			return humanBytes(n)
		}
		return fmt.Sprint(n)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", what, num(done))
	if total > 0 {
		fmt.Fprintf(&b, " of %s (%d%%)", num(total), min(100, done*100/total))
	}
	if unit != "" && unit != "B" {
		b.WriteString(" " + unit)
	}
	if extra != "" {
		b.WriteString(", " + extra)
	}
	secs := el.Seconds()
	if secs > 0 && done > 0 {
		rate := float64(done) / secs
		if unit == "B" {
			fmt.Fprintf(&b, ", %s/s", humanBytes(int64(rate)))
		} else {
			fmt.Fprintf(&b, ", %.1f/s", rate)
		}
		if total > done {
			left := time.Duration(float64(total-done) / rate * float64(time.Second))
			fmt.Fprintf(&b, ", about %s left", left.Round(time.Second))
		}
	}
	fmt.Fprintf(&b, ", %s", el.Round(time.Second))
	return b.String()
}

// watch calls poll every progressEvery until stop is called, for work
// whose progress is read from counters (a scan's metrics).
func (m *meter) watch(poll func()) (stop func()) {
	if m == nil {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				poll()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		m.clear()
	}
}
