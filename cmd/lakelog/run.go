package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
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

type verb struct {
	usage string
	run   func(ctx context.Context, e *env, args []string) error
}

// verbs are the commands; each file of this package registers its own in
// an init function with registerVerb.
var verbs = map[string]verb{}

func registerVerb(name, usage string, run func(ctx context.Context, e *env, args []string) error) {
	verbs[name] = verb{usage: usage, run: run}
}

func init() {
	registerVerb("create", "create TABLE --schema SCHEMA [--partition-by a,b] [--property k=v]...", runCreate)
	registerVerb("describe", "describe TABLE [--version N | --timestamp T] [--format table|json]", runDescribe)
	registerVerb("history", "history TABLE [--limit N] [--format table|jsonl]", runHistory)
}

// usageError is a bad command line: exit 2 with the verb's usage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// run is the whole program: tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	switch {
	case len(args) == 0:
		printUsage(stderr)
		return exitUsage
	case args[0] == "help":
		return runHelp(ctx, e, args[1:])
	case args[0] == "-h" || args[0] == "--help":
		printUsage(stdout)
		return exitOK
	}
	v, ok := verbs[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "lakelog: unknown command %q\n", args[0])
		printUsage(stderr)
		return exitUsage
	}
	err := v.run(ctx, e, args[1:])
	if cerr := e.closeStores(); err == nil && cerr != nil {
		err = cerr
	}
	var ue *usageError
	var hr *helpRequest
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &hr):
		printVerbHelp(stdout, args[0], v, hr.fs)
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		printVerbHelp(stdout, args[0], v, nil)
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "lakelog %s: %v\nusage: lakelog %s\n(lakelog %s --help lists every flag)\n", args[0], err, v.usage, args[0])
		return exitUsage
	case errors.Is(err, conflict.ErrConflict):
		fmt.Fprintf(stderr, "lakelog %s: %v\n", args[0], err)
		return exitConflict
	default:
		fmt.Fprintf(stderr, "lakelog %s: %v\n", args[0], err)
		return exitError
	}
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "lakelog: Delta Lake tables on local disk, S3, GCS and Azure")
	fmt.Fprintln(w, "\nusage:")
	names := make([]string, 0, len(verbs))
	for n := range verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  lakelog %s\n", verbs[n].usage)
	}
	fmt.Fprintln(w, "  lakelog help [predicates|types|time|uris|COMMAND]")
	fmt.Fprintln(w, "\nTABLE is a path, file://, s3://bucket/prefix, gs://bucket/prefix or az://container/prefix (lakelog help uris).")
	fmt.Fprintln(w, "lakelog COMMAND --help lists the command's flags.")
	fmt.Fprintln(w, exitCodesText)
}

// parseFlags parses a verb's flags, allowing them before or after the
// positional arguments ("lakelog scan TABLE --limit 3").
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpRequest{fs: fs}
			}
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
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

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

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
