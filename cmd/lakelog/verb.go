package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

// The verb table. Each command is declared once, as a verb value in the
// file that runs it: its arguments, flags, output formats and time
// travel. Parsing (parse), `lakelog CMD --help` (printVerbHelp), the
// command list of `lakelog help` and the synopses in DESIGN.md and
// README.md (TestDocsMatchVerbTable) all come from that declaration, so
// adding a verb or a flag is a change to one declaration and the code
// that uses it.

// section orders the command list of `lakelog help`: SQL first, for
// Spark users, then the verbs for scripts.
type section uint8

const (
	sectionSQL section = iota
	sectionRead
	sectionWrite
	sectionMaintain
	sectionOther
)

var sectionTitles = [...]string{
	sectionSQL:      "Delta SQL, as Spark users write it",
	sectionRead:     "Read",
	sectionWrite:    "Write",
	sectionMaintain: "Maintain",
	sectionOther:    "Other",
}

// verb is one command's declaration.
type verb struct {
	name    string
	section section
	args    []arg
	summary string // one sentence: the command list and the README
	flags   []flagDef
	// groups are flags of which one alternative may be given (or must be,
	// if required), such as --version N | --timestamp T.
	groups []flagGroup
	// travel adds --version N | --timestamp T: which version the verb
	// reads (c.snapshot opens it). travelTo makes it required: restore.
	travel travelMode
	// formats are the --format values, the first the default; nil: the
	// verb prints no rows or metrics and has no --format.
	formats []string
	// progress marks long work: a progress line on a terminal's stderr,
	// --quiet turns it off.
	progress bool
	// more is printed after the flags by --help.
	more string
	run  func(ctx context.Context, c *call) error
}

// arg is a positional argument.
type arg struct {
	name     string // as the usage shows it: TABLE, FILE
	many     bool   // one or more
	optional bool   // zero or one
}

type travelMode uint8

const (
	noTravel   travelMode = iota
	travelRead            // [--version N | --timestamp T]: the version to read
	travelTo              // --version N | --timestamp T: the version to go to
)

// flagKind says how a flag's text is read and checked; a value that does
// not read is a usage error naming the flag.
type flagKind uint8

const (
	textFlag     flagKind = iota // any text (a predicate, an expression)
	boolFlag                     // present or not
	listFlag                     // a,b,c: at least one name
	repeatFlag                   // repeatable text
	propertyFlag                 // repeatable k=v
	countFlag                    // an integer, 0 or more
	versionFlag                  // a table version, 0 or more
	bytesFlag                    // a positive size: 1048576, 128m, 1g
	durationFlag                 // 168h, '7 days', or a number of hours
	timeFlag                     // a point in time (lakelog help time)
	choiceFlag                   // one of choices, the first the default
)

// flagDef is one flag.
type flagDef struct {
	name    string
	kind    flagKind
	arg     string // the value's placeholder in the usage (PRED, N); kinds have defaults
	help    string // one sentence
	choices []string
	// required flags are not bracketed in the usage; missing, they are a
	// usage error ending with hint.
	required bool
	hint     string
}

// flagGroup is a set of alternatives, each a list of flag names whose
// first is the alternative's lead (the others need it).
type flagGroup struct {
	alts     [][]string
	required bool
}

// placeholder is the usage text of a flag's value.
func (f *flagDef) placeholder() string {
	if f.arg != "" {
		return f.arg
	}
	switch f.kind {
	case boolFlag:
		return ""
	case listFlag:
		return "a,b"
	case propertyFlag:
		return "k=v"
	case countFlag, versionFlag:
		return "N"
	case bytesFlag:
		return "BYTES"
	case durationFlag:
		return "DURATION"
	case timeFlag:
		return "T"
	case choiceFlag:
		return strings.Join(f.choices, "|")
	}
	return "VALUE"
}

// dashed is the flag as typed: -f for a one-letter name, else --name.
func (f *flagDef) dashed() string {
	if len(f.name) == 1 {
		return "-" + f.name
	}
	return "--" + f.name
}

func (f *flagDef) repeatable() bool { return f.kind == repeatFlag || f.kind == propertyFlag }

// verbs are the commands by name; each file registers its own in an init
// function.
var verbs = map[string]*verb{}

func register(v *verb) {
	if _, dup := verbs[v.name]; dup {
		panic("lakelog: verb " + v.name + " declared twice")
	}
	verbs[v.name] = v
}

// orderedVerbs are the verbs by section, then name.
func orderedVerbs() []*verb {
	out := make([]*verb, 0, len(verbs))
	for _, v := range verbs {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b *verb) int {
		if a.section != b.section {
			return int(a.section) - int(b.section)
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

// allFlags is the verb's flags in the order usage and help show them:
// time travel, the verb's own, --format, --quiet.
func (v *verb) allFlags() []flagDef {
	var out []flagDef
	switch v.travel {
	case travelRead:
		out = append(out,
			flagDef{name: "version", kind: versionFlag, help: "read this version (0 or more) instead of the latest"},
			flagDef{name: "timestamp", kind: timeFlag, help: "read the version current at this time instead of the latest (lakelog help time)"})
	case travelTo:
		out = append(out,
			flagDef{name: "version", kind: versionFlag, help: "the version to go to (0 or more)"},
			flagDef{name: "timestamp", kind: timeFlag, help: "go to the version current at this time (lakelog help time)"})
	}
	out = append(out, v.flags...)
	if len(v.formats) > 0 {
		out = append(out, flagDef{name: "format", kind: choiceFlag, choices: v.formats, help: formatHelp(v.formats)})
	}
	if v.progress {
		out = append(out, flagDef{name: "quiet", kind: boolFlag, help: "no progress line on stderr (it shows only on a terminal)"})
	}
	return out
}

// allGroups adds the time-travel group to the verb's own.
func (v *verb) allGroups() []flagGroup {
	gs := v.groups
	if v.travel != noTravel {
		gs = append([]flagGroup{{alts: [][]string{{"version"}, {"timestamp"}}, required: v.travel == travelTo}}, gs...)
	}
	return gs
}

func formatHelp(formats []string) string {
	return fmt.Sprintf("how to print the output: %s (lakelog help formats)", orList(formats))
}

// synopsis is the verb's usage line: NAME ARGS FLAGS.
func (v *verb) synopsis() string {
	return strings.Join(v.synopsisParts(), " ")
}

// synopsisParts are the words of the usage line; a bracketed option is
// one part.
func (v *verb) synopsisParts() []string {
	parts := []string{v.name}
	for _, a := range v.args {
		switch {
		case a.many:
			parts = append(parts, a.name+"...")
		case a.optional:
			parts = append(parts, "["+a.name+"]")
		default:
			parts = append(parts, a.name)
		}
	}
	flags := v.allFlags()
	byName := map[string]*flagDef{}
	for i := range flags {
		byName[flags[i].name] = &flags[i]
	}
	groupOf := map[string]*flagGroup{}
	groups := v.allGroups()
	for i := range groups {
		for _, alt := range groups[i].alts {
			for _, n := range alt {
				groupOf[n] = &groups[i]
			}
		}
	}
	shown := map[*flagGroup]bool{}
	for i := range flags {
		f := &flags[i]
		g := groupOf[f.name]
		if g == nil {
			parts = append(parts, flagUsage(f, !f.required))
			continue
		}
		if shown[g] {
			continue
		}
		shown[g] = true
		alts := make([]string, len(g.alts))
		for k, alt := range g.alts {
			words := []string{flagUsage(byName[alt[0]], false)}
			for _, n := range alt[1:] {
				words = append(words, flagUsage(byName[n], true))
			}
			alts[k] = strings.Join(words, " ")
		}
		text := strings.Join(alts, " | ")
		switch {
		case !g.required:
			text = "[" + text + "]"
		case len(alts) > 1 && strings.Contains(text, "["):
			text = "(" + text + ")"
		}
		parts = append(parts, text)
	}
	return parts
}

// flagUsage is one flag as the usage shows it.
func flagUsage(f *flagDef, optional bool) string {
	s := f.dashed()
	if p := f.placeholder(); p != "" {
		s += " " + p
	}
	if optional {
		s = "[" + s + "]"
	}
	if f.repeatable() {
		s += "..."
	}
	return s
}

// call is one run of a verb: its environment, positional arguments and
// parsed flags.
type call struct {
	*env
	verb   *verb
	args   []string
	texts  map[string][]string // by flag name: the texts given
	values map[string]any      // by flag name: the values of texts
	format string              // --format, or the verb's default
}

// parse reads args (flags before, between or after the positional
// arguments) by the verb's declaration.
func (v *verb) parse(e *env, args []string) (*call, error) {
	c := &call{env: e, verb: v, values: map[string]any{}, texts: map[string][]string{}}
	fs := flag.NewFlagSet(v.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags := v.allFlags()
	for i := range flags {
		fs.Var(&flagValue{def: &flags[i], c: c}, flags[i].name, flags[i].help)
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpRequest{}
			}
			var ue *usageError
			if errors.As(err, &ue) {
				return nil, ue
			}
			return nil, usagef("%s", strings.Replace(strings.Replace(err.Error(), " -", " --", 1), "flag provided but not defined", "no such flag", 1))
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		c.args = append(c.args, args[0])
		args = args[1:]
	}
	if err := v.checkArgs(c.args); err != nil {
		return nil, err
	}
	for i := range flags {
		if f := &flags[i]; f.required && !c.given(f.name) {
			msg := fmt.Sprintf("--%s is required", f.name)
			if f.hint != "" {
				msg += " (" + f.hint + ")"
			}
			return nil, usagef("%s", msg)
		}
	}
	for _, g := range v.allGroups() {
		if err := c.checkGroup(g); err != nil {
			return nil, err
		}
	}
	for i := range flags {
		for _, text := range c.texts[flags[i].name] {
			if err := c.set(&flags[i], text); err != nil {
				return nil, err
			}
		}
	}
	c.format = ""
	if len(v.formats) > 0 {
		c.format = v.formats[0]
		if f, ok := c.values["format"]; ok {
			c.format = f.(string)
		}
	}
	return c, nil
}

// checkArgs checks the number of positional arguments.
func (v *verb) checkArgs(got []string) error {
	min, max := 0, 0
	var names []string
	for _, a := range v.args {
		switch {
		case a.many:
			min, max = min+1, -1
			names = append(names, "at least one "+a.name)
		case a.optional:
			if max >= 0 {
				max++
			}
			names = append(names, "an optional "+a.name)
		default:
			min++
			if max >= 0 {
				max++
			}
			names = append(names, a.name)
		}
	}
	if len(got) >= min && (max < 0 || len(got) <= max) {
		return nil
	}
	want := "no arguments"
	switch {
	case len(names) == 1 && !v.args[0].many && !v.args[0].optional:
		want = "one " + names[0]
	case len(names) > 0:
		want = strings.Join(names[:len(names)-1], ", ")
		if want != "" {
			want += " and "
		}
		want += names[len(names)-1]
	}
	return usagef("want %s, got %d arguments", want, len(got))
}

// checkGroup checks one group of alternatives.
func (c *call) checkGroup(g flagGroup) error {
	used := -1
	var leads []string
	for k, alt := range g.alts {
		leads = append(leads, "--"+alt[0]+" "+c.verb.flag(alt[0]).placeholder())
		for _, n := range alt {
			if !c.given(n) {
				continue
			}
			if used >= 0 && used != k {
				return usagef("give %s, not both", strings.Join(altNames(g), " or "))
			}
			used = k
			if n != alt[0] && !c.given(alt[0]) {
				return usagef("--%s needs --%s", n, alt[0])
			}
		}
	}
	if used < 0 && g.required {
		return usagef("give %s", strings.Join(leads, " or "))
	}
	return nil
}

func altNames(g flagGroup) []string {
	out := make([]string, len(g.alts))
	for k, alt := range g.alts {
		out[k] = "--" + strings.Join(alt, "/--")
	}
	return out
}

// flag is the declaration of the verb's flag name; asking for a flag the
// verb does not declare is a programming error.
func (v *verb) flag(name string) *flagDef {
	for _, f := range v.allFlags() {
		if f.name == name {
			return &f
		}
	}
	panic(fmt.Sprintf("lakelog: verb %s declares no flag --%s", v.name, name))
}

// given reports whether the flag was on the command line.
func (c *call) given(name string) bool {
	c.verb.flag(name)
	return len(c.texts[name]) > 0
}

// value is the parsed value of a flag, or nil when it was not given.
func (c *call) value(name string, kinds ...flagKind) any {
	f := c.verb.flag(name)
	if !slices.Contains(kinds, f.kind) {
		panic(fmt.Sprintf("lakelog: flag --%s of %s is not of the kind asked", name, c.verb.name))
	}
	return c.values[name]
}

// text is a text or choice flag's value ("" when not given; a choice
// flag's first choice).
func (c *call) text(name string) string {
	if v, ok := c.value(name, textFlag, choiceFlag).(string); ok {
		return v
	}
	if f := c.verb.flag(name); f.kind == choiceFlag {
		return f.choices[0]
	}
	return ""
}

// on is a boolean flag.
func (c *call) on(name string) bool {
	v, _ := c.value(name, boolFlag).(bool)
	return v
}

// list is a list or repeated flag's values.
func (c *call) list(name string) []string {
	v, _ := c.value(name, listFlag, repeatFlag).([]string)
	return v
}

// properties is a k=v flag's values, in the order given (a key given
// twice keeps its last value).
func (c *call) properties(name string) map[string]string {
	v, _ := c.value(name, propertyFlag).(map[string]string)
	return v
}

// number is a count, version or size flag's value.
func (c *call) number(name string) (int64, bool) {
	v, ok := c.value(name, countFlag, versionFlag, bytesFlag).(int64)
	return v, ok
}

// duration is a duration flag's value.
func (c *call) duration(name string) (time.Duration, bool) {
	v, ok := c.value(name, durationFlag).(time.Duration)
	return v, ok
}

// when is a time flag's value.
func (c *call) when(name string) (time.Time, bool) {
	v, ok := c.value(name, timeFlag).(time.Time)
	return v, ok
}

// raw is the text a flag was given (the last, for a repeated flag).
func (c *call) raw(name string) string {
	c.verb.flag(name)
	if t := c.texts[name]; len(t) > 0 {
		return t[len(t)-1]
	}
	return ""
}

// table is the TABLE argument.
func (c *call) table() string { return c.args[0] }

// at is the time-travel choice as snapshot options (none: the latest).
func (c *call) at() []deltalog.Option {
	if c.verb.travel == noTravel {
		return nil
	}
	if v, ok := c.number("version"); ok {
		return []deltalog.Option{deltalog.AtVersion(v)}
	}
	if t, ok := c.when("timestamp"); ok {
		return []deltalog.Option{deltalog.AtTimestamp(t)}
	}
	return nil
}

// snapshot opens TABLE at the version --version or --timestamp choose.
func (c *call) snapshot(ctx context.Context) (*deltalog.Snapshot, error) {
	return c.openSnapshot(ctx, c.table(), c.at()...)
}

// flagValue collects one flag's texts as the flag package meets them;
// parse reads them into values once every flag is known.
type flagValue struct {
	def *flagDef
	c   *call
}

func (fv *flagValue) String() string   { return "" }
func (fv *flagValue) IsBoolFlag() bool { return fv.def.kind == boolFlag }

func (fv *flagValue) Set(s string) error {
	fv.c.texts[fv.def.name] = append(fv.c.texts[fv.def.name], s)
	return nil
}

// set reads one text of flag f into c.values.
func (c *call) set(f *flagDef, s string) error {
	vals := c.values
	bad := func(format string, a ...any) error {
		return usagef("--%s %q: %s", f.name, s, fmt.Sprintf(format, a...))
	}
	switch f.kind {
	case textFlag:
		vals[f.name] = s
	case boolFlag:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return bad("want true or false")
		}
		vals[f.name] = b
	case listFlag:
		l := splitList(s)
		if len(l) == 0 {
			return bad("name at least one")
		}
		vals[f.name] = l
	case repeatFlag:
		l, _ := vals[f.name].([]string)
		vals[f.name] = append(l, s)
	case propertyFlag:
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return bad("want key=value")
		}
		m, _ := vals[f.name].(map[string]string)
		if m == nil {
			m = map[string]string{}
		}
		m[strings.TrimSpace(k)] = v
		vals[f.name] = m
	case countFlag, versionFlag:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		switch {
		case err != nil && f.kind == versionFlag:
			return bad("a version is a whole number, 0 or more")
		case err != nil:
			return bad("want a whole number, 0 or more")
		case n < 0 && f.kind == versionFlag:
			return bad("a version is 0 or more")
		case n < 0:
			return bad("want 0 or more (leave --%s out for no limit)", f.name)
		}
		vals[f.name] = n
	case bytesFlag:
		n, err := parseBytes(s)
		if err != nil {
			return usagef("--%s: %v", f.name, err)
		}
		vals[f.name] = n
	case durationFlag:
		d, err := parseRetention(s)
		if err != nil {
			return bad("%v", err)
		}
		vals[f.name] = d
	case timeFlag:
		t, err := parseTime(s)
		if err != nil {
			return bad("%v", err)
		}
		vals[f.name] = t
	case choiceFlag:
		if !slices.Contains(f.choices, s) {
			return bad("want %s", orList(f.choices))
		}
		vals[f.name] = s
	}
	return nil
}

// orList is "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// parseRetention reads a duration: Go's (168h, 90m), an interval
// ('7 days', as delta.deletedFileRetentionDuration holds), or a bare
// number of hours (168, as Spark's RETAIN 168 HOURS and delta-rs's
// retention_hours).
func parseRetention(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if h, err := strconv.ParseFloat(t, 64); err == nil {
		if h < 0 || h > float64(1<<62)/float64(time.Hour) {
			return 0, fmt.Errorf("not a number of hours, 0 or more")
		}
		return time.Duration(h * float64(time.Hour)), nil
	}
	if d, err := time.ParseDuration(t); err == nil {
		if d < 0 {
			return 0, fmt.Errorf("a duration is 0 or more")
		}
		return d, nil
	}
	if d, err := actions.ParseDuration(t); err == nil {
		return d, nil
	}
	return 0, fmt.Errorf("not a duration (168 hours as 168 or 168h, or '7 days')")
}

// parseTime reads a point in time in the forms `lakelog help time` lists.
func parseTime(s string) (time.Time, error) { return deltalog.ParseTime(s) }

// waitHooks waits for the post-commit hooks of a commit (checkpoint,
// Iceberg metadata, symlink manifest: the library runs them after every
// commit); a failed hook is a warning, since the commit stands.
func (c *call) waitHooks(res *deltalog.CommitResult) {
	if res == nil {
		return
	}
	warnHooks(c.stderr, "lakelog "+c.verb.name, res.WaitHooks())
}

// warnHooks prints each failed post-commit hook of err as a warning.
func warnHooks(w io.Writer, who string, err error) {
	if err == nil {
		return
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var he *deltalog.HookError
		if errors.As(e, &he) && he.Hook == deltalog.HookIceberg {
			fmt.Fprintf(w, "%s: warning: %v (lakelog uniform sync catches up)\n", who, e)
			continue
		}
		fmt.Fprintf(w, "%s: warning: %v\n", who, e)
	}
}

// hasFlag reports whether the verb declares the flag.
func (v *verb) hasFlag(name string) bool {
	return slices.ContainsFunc(v.allFlags(), func(f flagDef) bool { return f.name == name })
}
