package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

func init() {
	register(&verb{
		name: "create", section: sectionWrite,
		args:    []arg{{name: "TABLE"}},
		summary: "create a table; SCHEMA is DDL (id long not null, amount decimal(10,2)) or @schema.json",
		flags: []flagDef{
			{name: "schema", kind: textFlag, arg: "SCHEMA", required: true, help: "DDL text (lakelog help types), or @file.json holding a Delta schema"},
			{name: "partition-by", kind: listFlag, help: "partition columns, comma-separated"},
			{name: "property", kind: propertyFlag, help: "a table property"},
			{name: "uniform", kind: choiceFlag, choices: []string{"none", "iceberg"}, help: "iceberg: also write Iceberg metadata after each commit (UniForm: column mapping by name, IcebergCompatV2)"},
		},
		formats: allFormats,
		run:     runCreate,
	})
	register(&verb{
		name: "describe", section: sectionRead,
		args:    []arg{{name: "TABLE"}},
		summary: "version, schema, partitioning, files, properties, protocol, app transaction versions",
		travel:  travelRead,
		formats: allFormats,
		run:     runDescribe,
	})
	register(&verb{
		name: "history", section: sectionRead,
		args:    []arg{{name: "TABLE"}},
		summary: "one line per version, newest first: time, operation, parameters, metrics",
		flags: []flagDef{
			{name: "limit", kind: countFlag, help: "show only the newest N versions (0 shows none; default: every version)"},
		},
		formats: allFormats,
		run:     runHistory,
	})
	register(&verb{
		name: "checkpoint", section: sectionMaintain,
		args:    []arg{{name: "TABLE"}},
		summary: "write a checkpoint of the latest version, then remove the log files older than delta.logRetentionDuration that no retained version needs",
		formats: allFormats, progress: true,
		run: runCheckpoint,
	})
}

func runCreate(ctx context.Context, c *call) error {
	schema, err := parseSchemaArg(c.text("schema"))
	if err != nil {
		return err
	}
	schemaString, err := actions.SchemaString(schema)
	if err != nil {
		return err
	}
	md := &actions.Metadata{
		SchemaString:     schemaString,
		PartitionColumns: c.list("partition-by"),
		Configuration:    map[string]string{},
	}
	for k, v := range c.properties("property") {
		md.Configuration[k] = strings.TrimSpace(v)
	}
	if c.text("uniform") == "iceberg" {
		uniformProperties(md.Configuration)
	}
	st, err := c.openStore(ctx, c.table())
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
	c.waitHooks(res)
	return c.report(newOpResult("CREATE TABLE", res, nil), func(w io.Writer) {
		fmt.Fprintf(w, "created %s at version %d\n", c.table(), res.Version)
	})
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

func runDescribe(ctx context.Context, c *call) error {
	snap, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	d := describeOf(snap)
	return c.report(d, func(w io.Writer) { printDescribe(w, c.table(), snap, d) })
}

// description is describe's JSON form (the CLI contract, doc.go).
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

func printDescribe(out io.Writer, uri string, s *deltalog.Snapshot, d description) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
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

func runHistory(ctx context.Context, c *call) error {
	st, err := c.openStore(ctx, c.table())
	if err != nil {
		return err
	}
	limit, ok := c.number("limit")
	if !ok {
		limit = -1
	}
	hist, err := deltalog.History(ctx, st, "", int(limit))
	if err != nil {
		return err
	}
	out := newRecordWriter(c.stdout, c.format, historyEntry{},
		[]string{"version", "timestamp", "operation", "operationParameters", "operationMetrics"},
		[]cellKind{numberCell, wordCell, wordCell, wordCell, wordCell},
		func(v any) []string {
			r := v.(historyEntry)
			if r.Missing {
				return []string{strconv.FormatInt(r.Version, 10), "-", "MISSING: no commit file", "", ""}
			}
			return []string{strconv.FormatInt(r.Version, 10), r.Timestamp, r.Operation, compactMap(r.OperationParameters), compactMap(r.OperationMetrics)}
		})
	var missing []string
	for _, h := range hist {
		if h.Missing {
			missing = append(missing, strconv.FormatInt(h.Version, 10))
		}
		if err := out.write(historyRow(h)); err != nil {
			return err
		}
	}
	if err := out.finish(false); err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: %w: the commit file of version %s is missing; versions before it can still be read with --version", c.table(), deltalog.ErrLogCorrupt, strings.Join(missing, ", "))
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
			r.OperationMetrics = numericMetrics(ci.OperationMetrics) // numbers, as every command prints them
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
	return strings.Join(parts, " ")
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

// checkpointResult is checkpoint's record.
type checkpointResult struct {
	Version         int64 `json:"version"`
	Actions         int64 `json:"actions"`
	Files           int   `json:"files"`
	LogFilesRemoved int   `json:"logFilesRemoved"`
}

func runCheckpoint(ctx context.Context, c *call) error {
	snap, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	var opts []deltalog.CheckpointOption
	m := c.meter()
	if m != nil {
		opts = append(opts, deltalog.CheckpointProgress(func(done, total int64) { m.set("checkpoint: files written", done, total, "", "") }))
	}
	lc, err := snap.Checkpoint(ctx, now, opts...)
	m.clear()
	if err != nil {
		return err
	}
	cl, err := snap.CleanupLog(ctx, now)
	if err != nil {
		return err
	}
	r := checkpointResult{Version: lc.Version, Actions: lc.Size, Files: snap.NumFiles(), LogFilesRemoved: len(cl.Deleted)}
	return c.report(r, func(w io.Writer) {
		fmt.Fprintf(w, "checkpoint of version %d written (%d actions, %d files)", lc.Version, lc.Size, snap.NumFiles())
		if len(cl.Deleted) > 0 {
			fmt.Fprintf(w, "; removed %d expired log files before version %d", len(cl.Deleted), cl.KeptFrom)
		}
		fmt.Fprintln(w)
	})
}
