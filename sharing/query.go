package sharing

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/reader"
)

// QueryRequest is the body of POST .../query (PROTOCOL.md "Request
// Body"). Fields the protocol adds later and this server does not know
// are ignored.
type QueryRequest struct {
	PredicateHints            []string `json:"predicateHints,omitempty"`
	JSONPredicateHints        *string  `json:"jsonPredicateHints,omitempty"`
	LimitHint                 *int64   `json:"limitHint,omitempty"`
	Version                   *int64   `json:"version,omitempty"`
	Timestamp                 *string  `json:"timestamp,omitempty"`
	StartingVersion           *int64   `json:"startingVersion,omitempty"`
	EndingVersion             *int64   `json:"endingVersion,omitempty"`
	MaxFiles                  *int32   `json:"maxFiles,omitempty"`
	PageToken                 *string  `json:"pageToken,omitempty"`
	IncludeRefreshToken       *bool    `json:"includeRefreshToken,omitempty"`
	RefreshToken              *string  `json:"refreshToken,omitempty"`
	IncludeHistoricalProtocol *bool    `json:"includeHistoricalProtocol,omitempty"`
	IdempotencyKey            *string  `json:"idempotencyKey,omitempty"`
}

// ParseQueryRequest reads a query body: empty is {}, anything but one
// JSON object of the protocol's field types is a *RequestError
// (MALFORMED_REQUEST), and so are values the protocol forbids (negative
// versions, more than one of version, timestamp and startingVersion,
// endingVersion before startingVersion, maxFiles not positive, tokens
// where they cannot be used).
func ParseQueryRequest(body []byte) (*QueryRequest, error) {
	q := &QueryRequest{}
	if len(bytes.TrimSpace(body)) == 0 {
		return q, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(q); err != nil {
		return nil, malformed("the request body is not a query: %v", jsonProblem(err))
	}
	if dec.More() {
		return nil, malformed("the request body holds more than one JSON value")
	}
	n := 0
	for _, set := range []bool{q.Version != nil, q.Timestamp != nil, q.StartingVersion != nil} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return nil, badRequest("give at most one of version, timestamp and startingVersion")
	case q.Version != nil && *q.Version < 0:
		return nil, badRequest("version %d is negative", *q.Version)
	case q.StartingVersion != nil && *q.StartingVersion < 0:
		return nil, badRequest("startingVersion %d is negative", *q.StartingVersion)
	case q.EndingVersion != nil && *q.EndingVersion < 0:
		return nil, badRequest("endingVersion %d is negative", *q.EndingVersion)
	case q.StartingVersion != nil && q.EndingVersion != nil && *q.StartingVersion > *q.EndingVersion:
		return nil, badRequest("startingVersion %d is after endingVersion %d", *q.StartingVersion, *q.EndingVersion)
	case q.MaxFiles != nil && *q.MaxFiles <= 0:
		return nil, badRequest("maxFiles %d is not positive", *q.MaxFiles)
	case q.LimitHint != nil && *q.LimitHint < 0:
		return nil, badRequest("limitHint %d is negative", *q.LimitHint)
	case n > 0 && (q.RefreshToken != nil || q.IncludeRefreshToken != nil && *q.IncludeRefreshToken):
		return nil, badRequest("refresh tokens are for queries of the latest version, not of a version, timestamp or startingVersion")
	case q.PageToken != nil && (q.RefreshToken != nil || q.IncludeRefreshToken != nil && *q.IncludeRefreshToken):
		return nil, badRequest("refresh tokens belong to the first page of a query")
	}
	return q, nil
}

// jsonProblem says what is wrong with a JSON body without echoing it.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("field %q must be %s", te.Field, te.Type)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends early"
	}
	return "invalid JSON"
}

// readBody reads the request body under the size limit.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, &RequestError{http.StatusRequestEntityTooLarge, CodeRequestTooLarge,
			fmt.Sprintf("the request body is over %d bytes", tooBig.Limit)}
	}
	if err != nil {
		return nil, malformed("the request body could not be read")
	}
	return b, nil
}

// queryToken is the page token of a query: the table, the version read,
// where the next page starts and a checksum of the query's parameters,
// until it expires.
type queryToken struct {
	Table    string `json:"t"`
	Version  int64  `json:"v"`           // snapshot version, or the end of a startingVersion range
	From     int64  `json:"f,omitempty"` // startingVersion queries: the version the page starts in
	Index    int    `json:"i"`           // files (or actions of version From) already sent
	Checksum string `json:"c"`
	Expires  int64  `json:"e"`
}

// refreshToken lets a client ask again for the files of the same latest
// version, with fresh URLs.
type refreshToken struct {
	Table   string `json:"t"`
	Version int64  `json:"v"`
	Expires int64  `json:"e"`
}

// pageTokenLife and refreshTokenLife are the reference server's.
const (
	pageTokenLife    = 72 * time.Hour
	refreshTokenLife = time.Hour
)

// checksum identifies the parameters a page token is valid for.
func (q *QueryRequest) checksum() string {
	c := *q
	c.MaxFiles, c.PageToken, c.IncludeRefreshToken, c.RefreshToken, c.IdempotencyKey = nil, nil, nil, nil, nil
	b, _ := json.Marshal(c)
	return sumOf(b)
}

// sumOf is a short hash of b.
func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:16])
}

// queryTable answers POST .../query.
func (s *Server) queryTable(w http.ResponseWriter, r *http.Request) {
	t, caps, ok := s.tableCall(w, r)
	if !ok {
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	q, err := ParseQueryRequest(body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if q.StartingVersion != nil {
		s.queryChanges(w, r, t, caps, q)
		return
	}
	s.querySnapshot(w, r, t, caps, q)
}

// querySnapshot answers a query of one version: its files that the hints
// do not rule out, one page of them with maxFiles.
func (s *Server) querySnapshot(w http.ResponseWriter, r *http.Request, t *tableEntry, caps capabilities, q *QueryRequest) {
	ctx := r.Context()
	now := s.now()
	version := int64(-1)
	var ts time.Time
	timeTravel := q.Version != nil || q.Timestamp != nil
	if q.Version != nil {
		version = *q.Version
	}
	if q.Timestamp != nil {
		var rerr *RequestError
		if ts, rerr = parseTimestamp("timestamp", *q.Timestamp); rerr != nil {
			writeError(w, r, rerr)
			return
		}
	}
	skip := 0
	sum := q.checksum()
	if q.PageToken != nil {
		var tok queryToken
		if s.openToken("query", *q.PageToken, &tok) != nil || tok.Table != t.cfg.ID || tok.Checksum != sum || tok.From != 0 {
			writeError(w, r, badRequest("pageToken is not a token of this query: send the query's parameters unchanged"))
			return
		}
		if now.Unix() > tok.Expires {
			writeError(w, r, badRequest("pageToken expired: start the query again"))
			return
		}
		version, ts, skip = tok.Version, time.Time{}, tok.Index
	}
	if q.RefreshToken != nil {
		var tok refreshToken
		if s.openToken("refresh", *q.RefreshToken, &tok) != nil || tok.Table != t.cfg.ID {
			writeError(w, r, badRequest("refreshToken is not a token of this table"))
			return
		}
		if now.Unix() > tok.Expires {
			writeError(w, r, badRequest("refreshToken expired: start the query again"))
			return
		}
		version = tok.Version
	}
	var snap *deltalog.Snapshot
	var err error
	if version >= 0 && !timeTravel {
		// A version from a token: the client may read it without history
		// sharing, as it read its first page.
		snap, err = deltalog.Open(ctx, t.store, "", deltalog.AtVersion(version), deltalog.WithStats())
		if errors.Is(err, deltalog.ErrVersionNotFound) {
			err = badRequest("the version of this query can no longer be read: start the query again")
		}
	} else {
		snap, err = s.snapshotAt(ctx, t, version, ts, deltalog.WithStats())
	}
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
	g := s.newSigner(r, t)
	var vp, tsp *int64
	if timeTravel {
		vp = ptr(snap.Version())
		if ms := s.versionMillis(ctx, t, snap); ms != nil {
			tsp = ms
		}
	}
	out.write(protocolLine(snap.Protocol(), format, caps, nil))
	out.write(metadataLine(t, snap.Metadata(), format, vp, nil, nil))
	pg := filePage{skip: skip, maxFiles: -1}
	if q.MaxFiles != nil {
		pg.maxFiles = int(*q.MaxFiles)
	}
	if limit := s.cfg.Limits.MaxPageSize; limit > 0 && (pg.maxFiles < 0 || pg.maxFiles > limit) && q.MaxFiles != nil {
		pg.maxFiles = limit
	}
	next, err := s.snapshotFiles(ctx, out, g, t, snap, q, format, caps, pg, vp, tsp)
	requestInfoOf(r).files = g.signed
	if err == nil && (next >= 0 || q.MaxFiles != nil || caps.includeEndStream || q.IncludeRefreshToken != nil && *q.IncludeRefreshToken) {
		end := &wireEndStream{}
		if next >= 0 {
			end.NextPageToken = s.sealToken("query", queryToken{Table: t.cfg.ID, Version: snap.Version(), Index: next,
				Checksum: sum, Expires: now.Add(pageTokenLife).Unix()})
		}
		if q.IncludeRefreshToken != nil && *q.IncludeRefreshToken {
			end.RefreshToken = s.sealToken("refresh", refreshToken{Table: t.cfg.ID, Version: snap.Version(),
				Expires: now.Add(refreshTokenLife).Unix()})
		}
		if !g.minExpires.IsZero() {
			end.MinURLExpirationTimestamp = ptr(g.minExpires.UnixMilli())
		}
		err = out.write(line{EndStream: end})
	}
	out.finish(err)
}

// filePage is the part of a file list one response carries: skip files,
// then at most maxFiles (-1: all).
type filePage struct {
	skip, maxFiles int
}

// versionMillis is the commit time of snap's version in milliseconds, nil
// when the log no longer has it.
func (s *Server) versionMillis(ctx context.Context, t *tableEntry, snap *deltalog.Snapshot) *int64 {
	if ts := snap.Timestamp(); !ts.IsZero() {
		return ptr(ts.UnixMilli())
	}
	for c, err := range deltalog.Commits(ctx, t.store, "", snap.Version(), snap.Version()) {
		if err != nil {
			return nil
		}
		return ptr(c.Timestamp.UnixMilli())
	}
	return nil
}

// snapshotFiles writes the file lines of snap that the hints keep, one
// page of them; it returns the index of the first file of the next page,
// or -1 when the page ends the list. With a limitHint and no usable
// predicate, files stop once their record counts (less deleted rows)
// reach the limit.
func (s *Server) snapshotFiles(ctx context.Context, out *ndjsonWriter, g *signer, t *tableEntry, snap *deltalog.Snapshot,
	q *QueryRequest, format string, caps capabilities, pg filePage, version, ts *int64) (int, error) {
	var jsonHint string
	if q.JSONPredicateHints != nil {
		jsonHint = *q.JSONPredicateHints
	}
	filter := hintFilter(snap, q.PredicateHints, jsonHint)
	var opts []reader.Option
	if filter != nil {
		opts = append(opts, reader.WithFilter(filter))
	}
	scan, err := reader.NewScan(snap, opts...)
	if err != nil {
		return -1, fmt.Errorf("sharing: table %s: %w", t.fullName(), err)
	}
	idScheme := cmpOr(caps.fileIDHash, format)
	var rows int64
	index, sent := 0, 0
	for f, err := range scan.Files(ctx) {
		if err != nil {
			return -1, fmt.Errorf("sharing: table %s: %w", t.fullName(), err)
		}
		if q.LimitHint != nil && filter == nil && rows >= *q.LimitHint {
			break
		}
		if f.Stats != nil && f.Stats.NumRecords >= 0 {
			rows += f.Stats.NumRecords
			if f.Add.DeletionVector != nil {
				rows -= f.Add.DeletionVector.Cardinality
			}
		}
		index++
		if index <= pg.skip {
			continue
		}
		if pg.maxFiles >= 0 && sent == pg.maxFiles {
			return index - 1, nil
		}
		l, err := s.fileLine(ctx, g, snap, f.Add, format, idScheme, version, ts)
		if err != nil {
			return -1, err
		}
		if err := out.write(l); err != nil {
			return -1, err
		}
		sent++
	}
	return -1, nil
}

// fileLine is the line of one live file of a snapshot.
func (s *Server) fileLine(ctx context.Context, g *signer, snap *deltalog.Snapshot, add *actions.Add, format, idScheme string, version, ts *int64) (line, error) {
	key, err := fileKey(snap, add.Path)
	if err != nil {
		return line{}, fileRefused(g.t, err)
	}
	u, err := g.sign(ctx, key)
	if err != nil {
		return line{}, err
	}
	if format == FormatParquet {
		return line{File: &wireFile{URL: u.url, ID: fileID(add.Path, idScheme), PartitionValues: nonNilMap(add.PartitionValues),
			Size: add.Size, Stats: add.Stats, Version: version, Timestamp: ts, ExpirationTimestamp: u.expires.UnixMilli()}}, nil
	}
	a := *add
	a.Path = u.url
	if a.DeletionVector, err = g.signDV(ctx, snap, add.DeletionVector); err != nil {
		return line{}, fileRefused(g.t, err)
	}
	df := &wireDeltaFile{ID: fileID(add.Path, idScheme), Version: version, Timestamp: ts,
		ExpirationTimestamp: u.expires.UnixMilli(), DeltaSingleAction: actions.Action{Add: &a}}
	if add.DeletionVector != nil && add.DeletionVector.StorageType != "i" {
		df.DeletionVectorFileID = fileID(add.DeletionVector.UniqueID(), idScheme)
	}
	return line{File: df}, nil
}

// fileRefused is the error of a file the server will not give out: the
// request fails (500) naming the table, never with a URL of the file.
func fileRefused(t *tableEntry, err error) error {
	if !errors.Is(err, ErrOutsideTable) {
		return err
	}
	return &RequestError{http.StatusInternalServerError, CodeInternalError,
		fmt.Sprintf("table %s names a file outside the table, which the server does not share; its operator must repair the table", t.fullName())}
}

func nonNilMap(m map[string]*string) map[string]*string {
	if m == nil {
		return map[string]*string{}
	}
	return m
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
