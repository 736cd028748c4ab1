package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// Exit codes: 0 success, 1 error, 2 usage, 3 conflict.
const (
	exitOK       = 0
	exitError    = 1
	exitUsage    = 2
	exitConflict = 3
)

// env is what a verb gets to work with.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	stores         []objstore.Store // opened by the verb; closed when it ends
}

// usageError is a bad command line: exit 2 with the verb's usage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// helpRequest is a verb's --help.
type helpRequest struct{}

func (h *helpRequest) Error() string { return "help requested" }

// run is the whole program: tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	switch {
	case len(args) == 0:
		printUsage(stderr)
		return exitUsage
	case args[0] == "help":
		return runHelp(e, args[1:])
	case args[0] == "-h" || args[0] == "--help":
		printUsage(stdout)
		return exitOK
	case args[0] == "--version" || args[0] == "-version" || args[0] == "-v" || args[0] == "version" && len(args) == 1:
		fmt.Fprintln(stdout, versionText())
		return exitOK
	}
	v, ok := verbs[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "lakelog: unknown command %q\n", args[0])
		printUsage(stderr)
		return exitUsage
	}
	c, err := v.parse(e, args[1:])
	if err == nil {
		err = v.run(ctx, c)
	}
	if cerr := e.closeStores(); err == nil && cerr != nil {
		err = cerr
	}
	var ue *usageError
	var hr *helpRequest
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &hr):
		printVerbHelp(stdout, v)
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "lakelog %s: %v\nusage: lakelog %s\n(lakelog %s --help lists every flag)\n", v.name, err, v.synopsis(), v.name)
		return exitUsage
	case errors.Is(err, conflict.ErrConflict):
		fmt.Fprintf(stderr, "lakelog %s: %s\n", v.name, cliWords(v.name, err))
		return exitConflict
	default:
		fmt.Fprintf(stderr, "lakelog %s: %s\n", v.name, cliWords(v.name, err))
		return exitError
	}
}

// commit is the commit the binary was built from when the toolchain did
// not stamp one (-ldflags '-X main.commit=...').
var commit string

// versionText is lakelog --version (also -v and lakelog version): the
// module version and the commit it was built from, as the Go toolchain
// stamped them or -ldflags set commit.
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "lakelog (version unknown: built without module information)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "lakelog %s", bi.Main.Version)
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	rev := settings["vcs.revision"]
	if rev == "" {
		rev = commit
	}
	if rev == "" {
		b.WriteString(" commit unknown (built without version control information: build inside a git checkout, or with -ldflags '-X main.commit=COMMIT')")
	} else {
		fmt.Fprintf(&b, " commit %s", rev[:min(12, len(rev))])
		if t := settings["vcs.time"]; t != "" {
			fmt.Fprintf(&b, " (%s)", t)
		}
		if settings["vcs.modified"] == "true" {
			b.WriteString(" with local changes")
		}
	}
	fmt.Fprintf(&b, ", %s", bi.GoVersion)
	return b.String()
}

// openStore resolves a TABLE argument to a store rooted at the table; the
// store is closed when the verb ends.
func (e *env) openStore(ctx context.Context, uri string) (objstore.Store, error) {
	st, err := objstore.Open(ctx, uri)
	if err != nil {
		return nil, err
	}
	e.stores = append(e.stores, st)
	return st, nil
}

// closeStores closes the stores the verb opened.
func (e *env) closeStores() error {
	var errs []error
	for _, st := range e.stores {
		errs = append(errs, objstore.Close(st))
	}
	e.stores = nil
	return errors.Join(errs...)
}

// openSnapshot opens TABLE at the requested version or timestamp.
func (e *env) openSnapshot(ctx context.Context, uri string, opts ...deltalog.Option) (*deltalog.Snapshot, error) {
	st, err := e.openStore(ctx, uri)
	if err != nil {
		return nil, err
	}
	return deltalog.Open(ctx, st, "", opts...) // the store is rooted at the table
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// runVerb runs another verb as its command line would (the quickstart
// shows the commands it runs).
func (e *env) runVerb(ctx context.Context, name string, args ...string) error {
	v := verbs[name]
	c, err := v.parse(e, args)
	if err != nil {
		return err
	}
	return v.run(ctx, c)
}
