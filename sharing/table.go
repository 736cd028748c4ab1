package sharing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

// latest opens the table's latest snapshot, refused when it is before the
// table's startVersion.
func (s *Server) latest(ctx context.Context, t *tableEntry, opts ...deltalog.Option) (*deltalog.Snapshot, error) {
	snap, err := deltalog.Open(ctx, t.store, "", opts...)
	if err != nil {
		return nil, fmt.Errorf("sharing: table %s: %w", t.fullName(), err)
	}
	if snap.Version() < t.cfg.StartVersion {
		return nil, forbidden("table %s is shared from version %d on; it is at version %d", t.fullName(), t.cfg.StartVersion, snap.Version())
	}
	return snap, nil
}

// historyAllowed refuses reads of past versions of a table whose history
// is not shared, and versions before its startVersion.
func historyAllowed(t *tableEntry, version int64) *RequestError {
	if !t.cfg.HistoryShared {
		return forbidden("table %s does not share its history: only its latest version can be read", t.fullName())
	}
	if version >= 0 && version < t.cfg.StartVersion {
		return forbidden("table %s is shared from version %d on; version %d cannot be read", t.fullName(), t.cfg.StartVersion, version)
	}
	return nil
}

// parseTimestamp reads a timestamp parameter: RFC 3339 as the protocol
// says, or the other forms time travel takes.
func parseTimestamp(name, v string) (time.Time, *RequestError) {
	ts, err := deltalog.ParseTime(v)
	if err != nil {
		return time.Time{}, badRequest("%s %q is not a timestamp (2026-01-31T10:00:00Z)", name, v)
	}
	return ts, nil
}

// snapshotAt opens the table at version (>= 0) or at the time ts (when
// version < 0 and ts is not zero), or its latest version. Past versions
// need history sharing; a version or time the log does not reach is 400.
func (s *Server) snapshotAt(ctx context.Context, t *tableEntry, version int64, ts time.Time, opts ...deltalog.Option) (*deltalog.Snapshot, error) {
	if version < 0 && ts.IsZero() {
		return s.latest(ctx, t, opts...)
	}
	if err := historyAllowed(t, version); err != nil {
		return nil, err
	}
	at := deltalog.AtVersion(version)
	if version < 0 {
		at = deltalog.AtTimestamp(ts)
	}
	snap, err := deltalog.Open(ctx, t.store, "", append(opts, at)...)
	if errors.Is(err, deltalog.ErrVersionNotFound) {
		if version >= 0 {
			return nil, badRequest("version %d of table %s cannot be read: it is after the latest version or its log was cleaned up", version, t.fullName())
		}
		return nil, badRequest("no version of table %s can be read at %s: the time is before its first version, after its latest commit, or its log was cleaned up", t.fullName(), ts.UTC().Format(time.RFC3339Nano))
	}
	if err != nil {
		return nil, fmt.Errorf("sharing: table %s: %w", t.fullName(), err)
	}
	if snap.Version() < t.cfg.StartVersion {
		return nil, forbidden("table %s is shared from version %d on; the time given is version %d", t.fullName(), t.cfg.StartVersion, snap.Version())
	}
	return snap, nil
}

// tableVersion answers GET .../version (and the deprecated HEAD of the
// table): the latest version, or with startingTimestamp the first version
// committed at or after it (version 0 for a time before it).
func (s *Server) tableVersion(w http.ResponseWriter, r *http.Request) {
	t, rerr := s.visibleTable(r)
	if rerr != nil {
		writeError(w, r, rerr)
		return
	}
	v, err := s.versionOf(r, t)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set(headerTableVersion, strconv.FormatInt(v, 10))
	w.WriteHeader(http.StatusOK)
}

func (s *Server) versionOf(r *http.Request, t *tableEntry) (int64, error) {
	ctx := r.Context()
	snap, err := s.latest(ctx, t)
	if err != nil {
		return 0, err
	}
	q := r.URL.Query().Get("startingTimestamp")
	if q == "" {
		return snap.Version(), nil
	}
	if err := historyAllowed(t, -1); err != nil {
		return 0, err
	}
	ts, rerr := parseTimestamp("startingTimestamp", q)
	if rerr != nil {
		return 0, rerr
	}
	from, _, err := deltalog.VersionsBetween(ctx, t.store, "", ts, time.Time{})
	if errors.Is(err, deltalog.ErrVersionNotFound) {
		return 0, badRequest("no version of table %s was committed at or after %s (the latest is %d)", t.fullName(), q, snap.Version())
	}
	if err != nil {
		return 0, fmt.Errorf("sharing: table %s: %w", t.fullName(), err)
	}
	if from < t.cfg.StartVersion {
		return 0, forbidden("table %s is shared from version %d on; startingTimestamp %s is version %d", t.fullName(), t.cfg.StartVersion, q, from)
	}
	return from, nil
}

// tableCall resolves the table of a request and the client's
// capabilities, answering the error itself when either fails.
func (s *Server) tableCall(w http.ResponseWriter, r *http.Request) (*tableEntry, capabilities, bool) {
	t, rerr := s.visibleTable(r)
	if rerr != nil {
		writeError(w, r, rerr)
		return nil, capabilities{}, false
	}
	caps, rerr := parseCapabilities(r)
	if rerr != nil {
		writeError(w, r, rerr)
		return nil, capabilities{}, false
	}
	return t, caps, true
}

// tableMetadata answers GET .../metadata: the protocol and metadata of
// the latest version, or of the version or timestamp asked.
func (s *Server) tableMetadata(w http.ResponseWriter, r *http.Request) {
	t, caps, ok := s.tableCall(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	var rerr *RequestError
	version := int64(-1)
	var ts time.Time
	if v := q.Get("version"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, r, badRequest("version %q is not a version (0 or more)", v))
			return
		}
		version = n
	}
	if v := q.Get("timestamp"); v != "" {
		if version >= 0 {
			writeError(w, r, badRequest("give version or timestamp, not both"))
			return
		}
		if ts, rerr = parseTimestamp("timestamp", v); rerr != nil {
			writeError(w, r, rerr)
			return
		}
	}
	snap, err := s.snapshotAt(r.Context(), t, version, ts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	format, err := chooseFormat(t, snap, caps)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := newNDJSON(w, r, snap.Version(), format, caps)
	var vp *int64
	if version >= 0 || !ts.IsZero() {
		vp = ptr(snap.Version())
	}
	out.write(protocolLine(snap.Protocol(), format, caps, nil))
	out.write(metadataLine(t, snap.Metadata(), format, vp, ptr(snap.SizeInBytes()), ptr(int64(snap.NumFiles()))))
	out.finish(nil)
}

// needsDelta says why a snapshot cannot be read as plain Parquet files
// ("" when it can): files with deletion vectors, or columns mapped to
// physical names.
func needsDelta(snap *deltalog.Snapshot) string {
	if snap.Config().ColumnMapped() {
		return "column mapping"
	}
	if snap.Config().Supports(actions.FeatureDeletionVectors) {
		return "deletion vectors"
	}
	return ""
}

// readerFeatureOf is the capabilities header's name of what needsDelta
// reports.
var readerFeatureOf = map[string]string{"column mapping": "columnmapping", "deletion vectors": "deletionvectors"}

// chooseFormat picks the response format, as the reference server does:
// the one format the client asks for, or of both parquet when the table's
// reader version is 1. A table that needs delta (deletion vectors, column
// mapping) is refused to a client that reads only parquet, or that asks
// for delta without declaring the reader feature.
func chooseFormat(t *tableEntry, snap *deltalog.Snapshot, caps capabilities) (string, error) {
	need := needsDelta(snap)
	format := FormatDelta
	if caps.accepts(FormatParquet) && (!caps.accepts(FormatDelta) || snap.Protocol().MinReaderVersion == 1 && need == "") {
		format = FormatParquet
	}
	if need == "" {
		return format, nil
	}
	if format == FormatParquet {
		return "", unsupported("table %s uses %s, which the parquet response format cannot carry: ask for responseformat=delta", t.fullName(), need)
	}
	if f := readerFeatureOf[need]; !caps.readerFeatures[f] {
		return "", unsupported("table %s uses %s: declare readerfeatures=%s in the delta-sharing-capabilities header", t.fullName(), need, f)
	}
	return format, nil
}

// protocolLine is the protocol line of a response. In the parquet format
// the reader version is 1 (chooseFormat let the table through). In the
// delta format a client that declared no reader features gets reader
// version 1 too (the reference server does so: the table needs none of
// them), otherwise the table's protocol.
func protocolLine(p *actions.Protocol, format string, caps capabilities, version *int64) line {
	if format == FormatParquet {
		return line{Protocol: wireProtocol{MinReaderVersion: 1}}
	}
	if len(caps.readerFeatures) == 0 {
		w := p.MinWriterVersion
		if w >= 7 {
			w = 2 // writer features need writer version 7
		}
		p = &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: w}
	}
	return line{Protocol: wireDeltaProtocol{DeltaProtocol: p, Version: version}}
}

// metadataLine is a metaData line. The parquet format carries the schema
// with only column comments kept, and of the configuration only
// enableChangeDataFeed, when the table shares its change feed (as the
// reference server); the delta format carries the metadata action whole.
func metadataLine(t *tableEntry, md *actions.Metadata, format string, version, size, numFiles *int64) line {
	if format == FormatDelta {
		return line{Metadata: wireDeltaMetadata{DeltaMetadata: md, Version: version, Size: size, NumFiles: numFiles}}
	}
	wm := wireMetadata{
		ID: md.ID, Format: wireFormat{Provider: "parquet"}, SchemaString: cleanSchema(md.SchemaString),
		PartitionColumns: nonNil(md.PartitionColumns), Version: version, Size: size, NumFiles: numFiles,
	}
	if md.Name != nil {
		wm.Name = *md.Name
	}
	if md.Description != nil {
		wm.Description = *md.Description
	}
	if t.cfg.ChangeFeedShared() && md.Properties().EnableChangeDataFeed {
		wm.Configuration = map[string]string{"enableChangeDataFeed": "true"}
	}
	return line{Metadata: wm}
}

// cleanSchema drops the metadata of the top-level fields except their
// comment (column mapping ids, generation expressions, invariants...),
// which parquet-format clients do not read. A schema that does not parse
// is returned as is.
func cleanSchema(schema string) string {
	var st struct {
		Type   string                       `json:"type"`
		Fields []map[string]json.RawMessage `json:"fields"`
	}
	if json.Unmarshal([]byte(schema), &st) != nil {
		return schema
	}
	for _, f := range st.Fields {
		var md map[string]json.RawMessage
		json.Unmarshal(f["metadata"], &md)
		keep := map[string]json.RawMessage{}
		if c, ok := md["comment"]; ok {
			keep["comment"] = c
		}
		f["metadata"], _ = json.Marshal(keep)
	}
	b, err := json.Marshal(st)
	if err != nil {
		return schema
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }
