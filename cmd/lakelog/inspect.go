package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

func runCreate(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("create", flag.ContinueOnError)
	schemaText := fs.String("schema", "", "DDL text, or @file.json holding a Delta schema")
	partitionBy := fs.String("partition-by", "", "partition columns, comma-separated")
	var props multiFlag
	fs.Var(&props, "property", "table property k=v (repeatable)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	if *schemaText == "" {
		return usagef("--schema is required")
	}
	schema, err := parseSchemaArg(*schemaText)
	if err != nil {
		return err
	}
	schemaString, err := actions.SchemaString(schema)
	if err != nil {
		return err
	}
	md := &actions.Metadata{
		SchemaString:     schemaString,
		PartitionColumns: splitList(*partitionBy),
		Configuration:    map[string]string{},
	}
	for _, p := range props {
		k, v, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return usagef("--property %q: want key=value", p)
		}
		md.Configuration[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	st, err := e.openStore(ctx, pos[0])
	if err != nil {
		return err
	}
	tx, err := deltalog.Create(st, "", md)
	if err != nil {
		return err
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "created %s at version %d\n", pos[0], res.Version)
	return nil
}

// parseSchemaArg reads --schema: DDL text or @file.json.
func parseSchemaArg(s string) (*actions.StructType, error) {
	if name, ok := strings.CutPrefix(s, "@"); ok {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		sch, err := actions.ParseSchema(string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return sch, nil
	}
	return actions.ParseDDL(s)
}

// timeTravelFlags adds --version and --timestamp to fs.
func timeTravelFlags(fs *flag.FlagSet) func() ([]deltalog.Option, error) {
	version := fs.Int64("version", -1, "read this version (0 or more) instead of the latest")
	ts := fs.String("timestamp", "", "read the version current at this time (RFC 3339 or 'YYYY-MM-DD[ HH:MM:SS]', UTC) instead of the latest")
	return func() ([]deltalog.Option, error) {
		versionSet := false
		fs.Visit(func(f *flag.Flag) { versionSet = versionSet || f.Name == "version" })
		if versionSet && *ts != "" {
			return nil, usagef("give --version or --timestamp, not both")
		}
		if versionSet {
			if *version < 0 {
				return nil, usagef("--version %d: a version is 0 or more", *version)
			}
			return []deltalog.Option{deltalog.AtVersion(*version)}, nil
		}
		if *ts != "" {
			t, err := parseTime(*ts)
			if err != nil {
				return nil, usagef("--timestamp %q: %v", *ts, err)
			}
			return []deltalog.Option{deltalog.AtTimestamp(t)}, nil
		}
		return nil, nil
	}
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	return time.Time{}, fmt.Errorf("not a timestamp (RFC 3339, 'YYYY-MM-DD HH:MM:SS' UTC, or epoch milliseconds)")
}

func runDescribe(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("describe", flag.ContinueOnError)
	tt := timeTravelFlags(fs)
	format := fs.String("format", "table", "table or json")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	opts, err := tt()
	if err != nil {
		return err
	}
	snap, err := e.openSnapshot(ctx, pos[0], opts...)
	if err != nil {
		return err
	}
	d := describeOf(snap)
	switch *format {
	case "json":
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(d)
	case "table":
		return printDescribe(e, pos[0], snap, d)
	}
	return usagef("--format %q: want table or json", *format)
}

// description is describe's JSON form (DESIGN.md, CLI contract).
type description struct {
	Version          int64             `json:"version"`
	Timestamp        string            `json:"timestamp,omitempty"`
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Columns          []string          `json:"columns"`
	PartitionColumns []string          `json:"partitionColumns"`
	Schema           json.RawMessage   `json:"schema"`
	NumFiles         int               `json:"numFiles"`
	SizeInBytes      int64             `json:"sizeInBytes"`
	Properties       map[string]string `json:"properties"`
	MinReaderVersion int               `json:"minReaderVersion"`
	MinWriterVersion int               `json:"minWriterVersion"`
	ReaderFeatures   []string          `json:"readerFeatures"`
	WriterFeatures   []string          `json:"writerFeatures"`
	// Txns are the application transaction versions (appId -> version),
	// where an exactly-once ingestor resumes from.
	Txns map[string]int64 `json:"txns"`
}

func describeOf(s *deltalog.Snapshot) description {
	md, p := s.Metadata(), s.Protocol()
	d := description{
		Version:          s.Version(),
		ID:               md.ID,
		Columns:          s.Schema().Names(),
		PartitionColumns: append([]string{}, md.PartitionColumns...),
		Schema:           json.RawMessage(md.SchemaString),
		NumFiles:         s.NumFiles(),
		SizeInBytes:      s.SizeInBytes(),
		Properties:       md.Configuration,
		MinReaderVersion: p.MinReaderVersion,
		MinWriterVersion: p.MinWriterVersion,
		ReaderFeatures:   append([]string{}, p.ReaderFeatures...),
		WriterFeatures:   append([]string{}, p.WriterFeatures...),
	}
	d.Txns = map[string]int64{}
	for id, t := range s.Txns() {
		d.Txns[id] = t.Version
	}
	if !json.Valid(d.Schema) {
		d.Schema = json.RawMessage("null")
	}
	if d.Properties == nil {
		d.Properties = map[string]string{}
	}
	if md.Name != nil {
		d.Name = *md.Name
	}
	if !s.Timestamp().IsZero() {
		d.Timestamp = s.Timestamp().UTC().Format(time.RFC3339Nano)
	}
	return d
}

func printDescribe(e *env, uri string, s *deltalog.Snapshot, d description) error {
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "table\t%s\n", uri)
	fmt.Fprintf(w, "version\t%d\n", d.Version)
	if d.Timestamp != "" {
		fmt.Fprintf(w, "timestamp\t%s\n", d.Timestamp)
	}
	fmt.Fprintf(w, "id\t%s\n", d.ID)
	fmt.Fprintf(w, "files\t%d (%s)\n", d.NumFiles, humanBytes(d.SizeInBytes))
	fmt.Fprintf(w, "partitioned by\t%s\n", orNone(strings.Join(d.PartitionColumns, ", ")))
	fmt.Fprintf(w, "protocol\treader %d, writer %d\n", d.MinReaderVersion, d.MinWriterVersion)
	if len(d.ReaderFeatures)+len(d.WriterFeatures) > 0 {
		fmt.Fprintf(w, "features\treader [%s], writer [%s]\n", strings.Join(d.ReaderFeatures, " "), strings.Join(d.WriterFeatures, " "))
	}
	keys := make([]string, 0, len(d.Properties))
	for k := range d.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "property\t%s=%s\n", k, d.Properties[k])
	}
	fmt.Fprintln(w, "\ncolumn\ttype\tnullable")
	for _, f := range s.Schema().Fields {
		fmt.Fprintf(w, "%s\t%s\t%v\n", f.Name, f.Type, f.Nullable)
	}
	return w.Flush()
}

func runHistory(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	limit := fs.Int("limit", -1, "show only the newest N versions (0 shows none; default: every version)")
	format := fs.String("format", "table", "table (for people) or jsonl (one JSON object per version)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	if *format != "table" && *format != "jsonl" {
		return usagef("--format %q: want table or jsonl", *format)
	}
	st, err := e.openStore(ctx, pos[0])
	if err != nil {
		return err
	}
	if *limit < -1 {
		return usagef("--limit %d: want a number of versions", *limit)
	}
	hist, err := deltalog.History(ctx, st, "", *limit)
	if err != nil {
		return err
	}
	var missing []string
	for _, h := range hist {
		if h.Missing {
			missing = append(missing, strconv.FormatInt(h.Version, 10))
		}
	}
	if *format == "jsonl" {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		for _, h := range hist {
			if err := enc.Encode(historyRow(h)); err != nil {
				return err
			}
		}
	} else {
		w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "version\ttimestamp\toperation\tparameters\tmetrics")
		for _, h := range hist {
			r := historyRow(h)
			if h.Missing {
				fmt.Fprintf(w, "%d\t-\tMISSING: no commit file\t\t\n", r.Version)
				continue
			}
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", r.Version, r.Timestamp, r.Operation, compactMap(r.OperationParameters), compactMap(r.OperationMetrics))
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: %w: the commit file of version %s is missing; versions before it can still be read with --version", pos[0], deltalog.ErrLogCorrupt, strings.Join(missing, ", "))
	}
	return nil
}

type historyEntry struct {
	Version             int64          `json:"version"`
	Missing             bool           `json:"missing,omitempty"`
	Timestamp           string         `json:"timestamp"`
	Operation           string         `json:"operation"`
	OperationParameters map[string]any `json:"operationParameters"`
	OperationMetrics    map[string]any `json:"operationMetrics"`
	ReadVersion         *int64         `json:"readVersion,omitempty"`
	IsolationLevel      string         `json:"isolationLevel,omitempty"`
	IsBlindAppend       *bool          `json:"isBlindAppend,omitempty"`
	EngineInfo          string         `json:"engineInfo,omitempty"`
	UserMetadata        string         `json:"userMetadata,omitempty"`
}

func historyRow(h deltalog.CommitEntry) historyEntry {
	r := historyEntry{Version: h.Version, Timestamp: h.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z07:00"), OperationParameters: map[string]any{}, OperationMetrics: map[string]any{}}
	if h.Missing {
		r.Missing, r.Timestamp = true, ""
	}
	if ci := h.Info; ci != nil {
		r.Operation = ci.Operation
		if ci.OperationParameters != nil {
			r.OperationParameters = ci.OperationParameters
		}
		if ci.OperationMetrics != nil {
			r.OperationMetrics = ci.OperationMetrics
		}
		r.ReadVersion, r.IsolationLevel, r.IsBlindAppend = ci.ReadVersion, ci.IsolationLevel, ci.IsBlindAppend
		r.EngineInfo = ci.EngineInfo
		if r.EngineInfo == "" {
			if v, ok := ci.Extra["clientVersion"]; ok {
				_ = json.Unmarshal(v, &r.EngineInfo)
			}
		}
		r.UserMetadata = ci.UserMetadata
	}
	return r
}

func compactMap(m map[string]any) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := m[k]
		if v == nil {
			v = "null"
		}
		parts[i] = fmt.Sprintf("%s=%v", k, v)
	}
	s := strings.Join(parts, " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func init() {
	registerVerb("checkpoint", "checkpoint TABLE   (write a checkpoint of the latest version, then clean up the expired log)", runCheckpoint)
}

func runCheckpoint(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("checkpoint", flag.ContinueOnError)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	snap, err := e.openSnapshot(ctx, pos[0])
	if err != nil {
		return err
	}
	now := time.Now()
	lc, err := snap.Checkpoint(ctx, now)
	if err != nil {
		return err
	}
	cl, err := snap.CleanupLog(ctx, now)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "checkpoint of version %d written (%d actions, %d files)", lc.Version, lc.Size, snap.NumFiles())
	if len(cl.Deleted) > 0 {
		fmt.Fprintf(e.stdout, "; removed %d expired log files before version %d", len(cl.Deleted), cl.KeptFrom)
	}
	fmt.Fprintln(e.stdout)
	return nil
}
