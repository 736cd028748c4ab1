package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// printUsage is lakelog --help: the commands by section, SQL first.
func printUsage(w io.Writer) {
	fmt.Fprintln(w, "lakelog: Delta Lake tables on local disk, S3, GCS and Azure")
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	last := section(255)
	for _, v := range orderedVerbs() {
		if v.section != last {
			last = v.section
			fmt.Fprintf(tw, "\n%s:\n", sectionTitles[v.section])
		}
		parts := v.synopsisParts()
		head := parts[:1+len(v.args)]
		fmt.Fprintf(tw, "  lakelog %s\t%s\n", strings.Join(head, " "), v.summary)
	}
	fmt.Fprintf(tw, "  lakelog help [%s|COMMAND]\tthe forms of predicates, types, times, URIs and outputs, or a command's flags\n", strings.Join(topicNames(), "|"))
	fmt.Fprintf(tw, "  lakelog --version\tthe version and commit of this build\n")
	tw.Flush()
	fmt.Fprintln(w, "\nTABLE is a path, file://, s3://bucket/prefix, gs://bucket/prefix or az://container/prefix (lakelog help uris).")
	fmt.Fprintln(w, "lakelog COMMAND --help lists the command's flags.")
	fmt.Fprintln(w, exitCodesText)
}

// printVerbHelp is lakelog CMD --help: the usage line, the summary, each
// flag with its sentence, the verb's notes and the exit codes.
func printVerbHelp(w io.Writer, v *verb) {
	fmt.Fprintf(w, "usage: lakelog %s\n\n%s\n", v.synopsis(), v.summary)
	if flags := v.allFlags(); len(flags) > 0 {
		fmt.Fprintln(w, "\nflags:")
		for _, f := range flags {
			fmt.Fprintf(w, "  --%s", f.name)
			if p := f.placeholder(); p != "" {
				fmt.Fprintf(w, " %s", p)
			}
			fmt.Fprintf(w, "\n      %s", f.help)
			switch {
			case f.required:
				fmt.Fprint(w, " (required)")
			case f.kind == choiceFlag:
				fmt.Fprintf(w, " (default %s)", f.choices[0])
			case f.repeatable():
				fmt.Fprint(w, " (repeatable)")
			}
			fmt.Fprintln(w)
		}
	}
	if v.more != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(v.more))
	}
	fmt.Fprintf(w, "\n%s\nSee also: lakelog help %s\n", exitCodesText, strings.Join(topicNames(), "|"))
}

func topicNames() []string { return slices.Sorted(maps.Keys(helpTopics)) }

const exitCodesText = "exit codes: 0 success, 1 error (named on stderr), 2 usage error, 3 transaction aborted by a conflict"

// helpTopics are the texts of lakelog help TOPIC.
var helpTopics = map[string]string{
	"formats": formatsTopic,
	"predicates": `Predicates (--where PRED) are SQL-like and follow Spark SQL (ANSI mode):

  comparisons   a = 1, a <> 'x' (or !=), a < 3, a <= 3, a > 3, a >= 3,
                a <=> NULL (null-safe equality)
  logic         AND, OR, NOT, parentheses; NULL is unknown: a row is kept
                only where the predicate is TRUE
  sets, ranges  a IN ('x', 'y'), a NOT IN (1, 2), a BETWEEN 1 AND 9
  patterns      s LIKE 'ab%' (% any run, _ one character)
  nulls         a IS NULL, a IS NOT NULL
  arithmetic    + - * / % and unary minus (integer overflow and division
                by zero are errors)
  casts         CAST(a AS double)
  columns       names match case-insensitively; a.b is a struct field;
                ` + "`odd name`" + ` in backquotes
  literals      numbers, 'strings' ('' is a quote), TRUE, FALSE, NULL,
                X'0aff' (binary), DATE '2026-03-01',
                TIMESTAMP '2026-03-01 10:00:00' (UTC unless a zone is
                given), TIMESTAMP_NTZ '2026-03-01 10:00:00'

A string literal compared with a column of another type is read as that
type: d >= '2026-03-01' on a date column compares dates.
Files whose partition values or statistics show that no row can match are
not read.

Example:
  lakelog scan t --where "country = 'nl' AND (amount > 100 OR day >= '2026-03-01')"
`,
	"types": `Types in --schema DDL text ("id long not null, amount decimal(10,2), ...")
and the Delta type each one is:

  boolean
  byte, tinyint                 8-bit integer
  short, smallint               16-bit integer
  int, integer                  32-bit integer
  long, bigint                  64-bit integer
  float, real                   32-bit floating point
  double                        64-bit floating point
  decimal(p,s), dec, numeric    exact decimal, precision 1-38 (default (10,0))
  string, char(n), varchar(n)   UTF-8 text
  binary                        bytes
  date                          a calendar day
  timestamp                     an instant, microseconds, shown in UTC
  timestamp_ntz                 a wall-clock time without a zone
  array<T>                      a list
  map<K, V>                     a map (keys are never null)
  struct<a: T, b: U>            nested fields

A column is nullable unless followed by NOT NULL; COMMENT 'text' adds a
comment. --schema @file.json reads a Delta schema (the schemaString form).
In JSONL input dates are YYYY-MM-DD and timestamps RFC 3339; in CSV, the
same text in a column.
`,
	"time": `Time travel and times:

  --version N     the table as of version N (0 or more)
  --timestamp T   the table as of the latest version committed at or
                  before T; T is RFC 3339 (2026-03-01T10:00:00Z,
                  2026-03-01T12:00:00+02:00), 'YYYY-MM-DD HH:MM:SS[.ffffff]'
                  (UTC), 'YYYY-MM-DDTHH:MM:SS', 'YYYY-MM-DD HH:MM',
                  'YYYY-MM-DD' (midnight UTC), or epoch milliseconds

A version's time is its in-commit timestamp where the table records them
(delta.enableInCommitTimestamps), else its commit file's modification
time, made increasing as Spark makes it. Versions whose log files were
removed by log cleanup (older than delta.logRetentionDuration, 30 days by
default) cannot be read.
`,
	"uris": `TABLE is where a table lives:

  /path/to/table, ./table, file:///path   local disk
  s3://bucket/prefix    S3 and S3-compatible stores. Credentials and region
                        from the AWS environment (AWS_ACCESS_KEY_ID,
                        AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_PROFILE, ...);
                        AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3) for MinIO
                        and others, path-style unless
                        AWS_VIRTUAL_HOSTED_STYLE_REQUEST=true
  gs://bucket/prefix    Google Cloud Storage: application default
                        credentials (GOOGLE_APPLICATION_CREDENTIALS);
                        STORAGE_EMULATOR_HOST for an emulator
  az://container/prefix Azure Blob Storage: AZURE_STORAGE_CONNECTION_STRING,
                        or AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_ACCOUNT_KEY
                        or AZURE_STORAGE_SAS_TOKEN; AZURE_STORAGE_USE_EMULATOR
                        =true for Azurite

Commits are created with each store's create-if-absent (a link on disk,
If-None-Match: * on S3 and Azure, DoesNotExist on GCS), so any number of
writers share a table without a lock service.
`,
}

// runHelp is lakelog help [TOPIC | COMMAND].
func runHelp(e *env, args []string) int {
	w := e.stdout
	if len(args) == 0 {
		printUsage(w)
		return exitOK
	}
	if text, ok := helpTopics[args[0]]; ok && len(args) == 1 {
		fmt.Fprint(w, text)
		return exitOK
	}
	if v, ok := verbs[args[0]]; ok && len(args) == 1 {
		printVerbHelp(w, v)
		return exitOK
	}
	fmt.Fprintf(w, "lakelog help: no topic %q (topics: %s; or a command's name)\n", strings.Join(args, " "), strings.Join(topicNames(), ", "))
	return exitUsage
}
