package sharing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

// changeWalk is a walk over the commits of versions from..to that writes
// their file actions: the data change files of a startingVersion query
// (adds and removes with dataChange), or the change data feed (a
// version's cdc files when it has any, else its adds and removes with
// dataChange, as PROTOCOL.md "Change Data Files" reads them).
type changeWalk struct {
	s        *Server
	t        *tableEntry
	out      *ndjsonWriter
	g        *signer
	head     *deltalog.Snapshot // the snapshot at from: keys, and the first metadata
	format   string
	idScheme string
	from, to int64
	feed     bool // the change data feed rather than a startingVersion query
	// metadata and protocol write the versions' metaData and protocol
	// actions (after from).
	metadata, protocol bool
	// page: skip the first skip file lines of version pageFrom, then
	// write at most maxFiles (-1: all).
	pageFrom       int64
	skip, maxFiles int
	sent           int
}

// pagePos is where the next page of a walk starts: version v, after its
// first index file lines; v < 0 when the walk ended.
type pagePos struct {
	v     int64
	index int
}

// run walks the commits. With the feed, a version whose table does not
// record change data (delta.enableChangeDataFeed not true) fails.
func (cw *changeWalk) run(ctx context.Context) (pagePos, error) {
	cdfOn := cw.head.Properties().EnableChangeDataFeed
	start := max(cw.from, cw.pageFrom)
	for c, err := range deltalog.Commits(ctx, cw.t.store, "", start, cw.to) {
		if err != nil {
			if errors.Is(err, deltalog.ErrVersionNotFound) {
				return pagePos{}, badRequest("the log of table %s from version %d on cannot be read: it was cleaned up", cw.t.fullName(), start)
			}
			return pagePos{}, fmt.Errorf("sharing: table %s: %w", cw.t.fullName(), err)
		}
		ms := ptr(c.Timestamp.UnixMilli())
		v := c.Version
		hasCDC := false
		for _, a := range c.Actions {
			switch {
			case a.CDC != nil:
				hasCDC = true
			case a.Metadata != nil:
				cdfOn = a.Metadata.Properties().EnableChangeDataFeed
			}
		}
		if cw.feed && !cdfOn {
			return pagePos{}, badRequest("table %s does not record change data at version %d (delta.enableChangeDataFeed is not true there)", cw.t.fullName(), v)
		}
		index := 0
		for _, a := range c.Actions {
			if v > cw.from && a.Metadata != nil && cw.metadata && (v != cw.pageFrom || cw.skip == 0) {
				if err := cw.out.write(metadataLine(cw.t, a.Metadata, cw.format, ptr(v), nil, nil)); err != nil {
					return pagePos{}, err
				}
			}
			if v > cw.from && a.Protocol != nil && cw.protocol && (v != cw.pageFrom || cw.skip == 0) {
				if err := cw.out.write(line{Protocol: wireDeltaProtocol{DeltaProtocol: a.Protocol, Version: ptr(v)}}); err != nil {
					return pagePos{}, err
				}
			}
			if !cw.wanted(a, hasCDC) {
				continue
			}
			index++
			if v == cw.pageFrom && index <= cw.skip {
				continue
			}
			if cw.maxFiles >= 0 && cw.sent == cw.maxFiles {
				return pagePos{v, index - 1}, nil
			}
			l, err := cw.line(ctx, a, v, ms)
			if err != nil {
				return pagePos{}, err
			}
			if err := cw.out.write(l); err != nil {
				return pagePos{}, err
			}
			cw.sent++
		}
	}
	return pagePos{v: -1}, nil
}

// wanted reports whether a is a file action the walk writes.
func (cw *changeWalk) wanted(a actions.Action, hasCDC bool) bool {
	switch {
	case cw.feed && hasCDC:
		return a.CDC != nil
	case a.Add != nil:
		return a.Add.DataChange
	case a.Remove != nil:
		return a.Remove.DataChange
	}
	return false
}

// line is the line of one file action of version v.
func (cw *changeWalk) line(ctx context.Context, a actions.Action, v int64, ms *int64) (line, error) {
	var path string
	var dv *actions.DeletionVector
	switch {
	case a.Add != nil:
		path, dv = a.Add.Path, a.Add.DeletionVector
	case a.Remove != nil:
		path, dv = a.Remove.Path, a.Remove.DeletionVector
	default:
		path = a.CDC.Path
	}
	if dv != nil && cw.format == FormatParquet {
		return line{}, unsupported("version %d of table %s has deletion vectors, which the parquet response format cannot carry: ask for responseformat=delta", v, cw.t.fullName())
	}
	key, err := fileKey(cw.head, path)
	if err != nil {
		return line{}, fileRefused(cw.t, err)
	}
	u, err := cw.g.sign(ctx, key)
	if err != nil {
		return line{}, err
	}
	id := fileID(path, cw.idScheme)
	if cw.format == FormatParquet {
		f := &wireFile{URL: u.url, ID: id, Version: ptr(v), Timestamp: ms, ExpirationTimestamp: u.expires.UnixMilli()}
		switch {
		case a.Add != nil:
			f.PartitionValues, f.Size, f.Stats = nonNilMap(a.Add.PartitionValues), a.Add.Size, a.Add.Stats
			return line{Add: f}, nil
		case a.Remove != nil:
			f.PartitionValues = nonNilMap(a.Remove.PartitionValues)
			if a.Remove.Size != nil {
				f.Size = *a.Remove.Size
			}
			return line{Remove: f}, nil
		default:
			f.PartitionValues, f.Size = nonNilMap(a.CDC.PartitionValues), a.CDC.Size
			return line{CDF: f}, nil
		}
	}
	var single actions.Action
	switch {
	case a.Add != nil:
		add := *a.Add
		add.Path = u.url
		if add.DeletionVector, err = cw.g.signDV(ctx, cw.head, dv); err != nil {
			return line{}, fileRefused(cw.t, err)
		}
		single.Add = &add
	case a.Remove != nil:
		rm := *a.Remove
		rm.Path = u.url
		if rm.DeletionVector, err = cw.g.signDV(ctx, cw.head, dv); err != nil {
			return line{}, fileRefused(cw.t, err)
		}
		single.Remove = &rm
	default:
		cdc := *a.CDC
		cdc.Path = u.url
		single.CDC = &cdc
	}
	df := &wireDeltaFile{ID: id, Version: ptr(v), Timestamp: ms, ExpirationTimestamp: u.expires.UnixMilli(), DeltaSingleAction: single}
	if dv != nil && dv.StorageType != "i" {
		df.DeletionVectorFileID = fileID(dv.UniqueID(), cw.idScheme)
	}
	return line{File: df}, nil
}

// changesToken is the page token of a walk: its end, where the next page
// starts and the parameters' checksum.
type changesToken struct {
	Table    string `json:"t"`
	To       int64  `json:"to"`
	From     int64  `json:"f"`
	Index    int    `json:"i"`
	Checksum string `json:"c"`
	Expires  int64  `json:"e"`
}

// walkPage reads the page token and maxFiles of a walk into cw; to may
// be replaced by the token's (the end fixed by the first page).
func (s *Server) walkPage(cw *changeWalk, token *string, maxFiles *int32, sum string) *RequestError {
	cw.maxFiles, cw.pageFrom = -1, -1
	if maxFiles != nil {
		cw.maxFiles = int(*maxFiles)
	}
	if limit := s.cfg.Limits.MaxPageSize; limit > 0 && maxFiles != nil && cw.maxFiles > limit {
		cw.maxFiles = limit
	}
	if token == nil {
		return nil
	}
	var tok changesToken
	if s.openToken("changes", *token, &tok) != nil || tok.Table != cw.t.cfg.ID || tok.Checksum != sum || tok.From < cw.from {
		return badRequest("pageToken is not a token of this query: send the query's parameters unchanged")
	}
	if s.now().Unix() > tok.Expires {
		return badRequest("pageToken expired: start the query again")
	}
	cw.to, cw.pageFrom, cw.skip = tok.To, tok.From, tok.Index
	return nil
}

// finishWalk writes the walk's endStreamAction when the client needs one
// and ends the response.
func (s *Server) finishWalk(r *http.Request, cw *changeWalk, pos pagePos, err error, sum string, always bool) {
	requestInfoOf(r).files = cw.g.signed
	if err == nil && (pos.v >= 0 || always) {
		end := &wireEndStream{}
		if pos.v >= 0 {
			end.NextPageToken = s.sealToken("changes", changesToken{Table: cw.t.cfg.ID, To: cw.to, From: pos.v, Index: pos.index,
				Checksum: sum, Expires: s.now().Add(pageTokenLife).Unix()})
		}
		if !cw.g.minExpires.IsZero() {
			end.MinURLExpirationTimestamp = ptr(cw.g.minExpires.UnixMilli())
		}
		err = cw.out.write(line{EndStream: end})
	}
	cw.out.finish(err)
}

// queryChanges answers a query with startingVersion: the data change
// files of versions startingVersion..endingVersion (the latest when not
// given or beyond it), with the metadata of versions after the first
// that change it.
func (s *Server) queryChanges(w http.ResponseWriter, r *http.Request, t *tableEntry, caps capabilities, q *QueryRequest) {
	ctx := r.Context()
	from := *q.StartingVersion
	if err := historyAllowed(t, from); err != nil {
		writeError(w, r, err)
		return
	}
	latest, err := s.latest(ctx, t)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if from > latest.Version() {
		writeError(w, r, badRequest("startingVersion %d is after the latest version %d of table %s", from, latest.Version(), t.fullName()))
		return
	}
	to := latest.Version()
	if q.EndingVersion != nil {
		to = min(to, *q.EndingVersion)
	}
	cw := &changeWalk{s: s, t: t, from: from, to: to, metadata: true}
	sum := q.checksum()
	if rerr := s.walkPage(cw, q.PageToken, q.MaxFiles, sum); rerr != nil {
		writeError(w, r, rerr)
		return
	}
	s.serveWalk(w, r, cw, caps, from, q.IncludeHistoricalProtocol != nil && *q.IncludeHistoricalProtocol, sum, q.MaxFiles != nil || caps.includeEndStream)
}

// serveWalk answers a walk: the protocol and metadata of version
// headVersion, then the walk's file lines and, when the client needs one,
// an endStreamAction. historicalProtocol adds the protocol actions of the
// versions walked (delta format only).
func (s *Server) serveWalk(w http.ResponseWriter, r *http.Request, cw *changeWalk, caps capabilities, headVersion int64, historicalProtocol bool, sum string, endAlways bool) {
	ctx := r.Context()
	head, err := s.snapshotAt(ctx, cw.t, headVersion, time.Time{})
	if err != nil {
		writeError(w, r, err)
		return
	}
	if cw.format, err = chooseFormat(cw.t, head, caps); err != nil {
		writeError(w, r, err)
		return
	}
	cw.head, cw.idScheme = head, cmpOr(caps.fileIDHash, cw.format)
	cw.protocol = cw.format == FormatDelta && historicalProtocol
	cw.out, cw.g = newNDJSON(w, r, cw.from, cw.format, caps), s.newSigner(r, cw.t)
	var pv *int64
	if cw.protocol {
		pv = ptr(head.Version())
	}
	cw.out.write(protocolLine(head.Protocol(), cw.format, caps, pv))
	cw.out.write(metadataLine(cw.t, head.Metadata(), cw.format, ptr(head.Version()), nil, nil))
	pos, err := cw.run(ctx)
	s.finishWalk(r, cw, pos, err, sum, endAlways)
}

// tableChanges answers GET .../changes: the change data feed between a
// starting version or timestamp and an ending one (the latest when not
// given; an ending version beyond it is the latest).
func (s *Server) tableChanges(w http.ResponseWriter, r *http.Request) {
	t, caps, ok := s.tableCall(w, r)
	if !ok {
		return
	}
	if !t.cfg.ChangeFeedShared() {
		writeError(w, r, forbidden("table %s does not share its change data feed", t.fullName()))
		return
	}
	p, rerr := parseChangesParams(r)
	if rerr != nil {
		writeError(w, r, rerr)
		return
	}
	ctx := r.Context()
	latest, err := s.latest(ctx, t)
	if err != nil {
		writeError(w, r, err)
		return
	}
	from, to, err := s.changeRange(ctx, t, latest, p)
	if err != nil {
		writeError(w, r, err)
		return
	}
	cw := &changeWalk{s: s, t: t, from: from, to: to, feed: true, metadata: p.historicalMetadata}
	if rerr := s.walkPage(cw, p.pageToken, p.maxFiles, p.checksum); rerr != nil {
		writeError(w, r, rerr)
		return
	}
	headVersion := cw.to
	if p.historicalMetadata {
		headVersion = from
	}
	s.serveWalk(w, r, cw, caps, headVersion, p.historicalProtocol, p.checksum, p.maxFiles != nil || caps.includeEndStream)
}

// changesParams are the query parameters of GET .../changes.
type changesParams struct {
	startV, endV                           int64 // -1 when not given
	startT, endT                           time.Time
	historicalMetadata, historicalProtocol bool
	maxFiles                               *int32
	pageToken                              *string
	checksum                               string
}

func parseChangesParams(r *http.Request) (changesParams, *RequestError) {
	q := r.URL.Query()
	p := changesParams{startV: -1, endV: -1}
	version := func(name string) (int64, *RequestError) {
		v := q.Get(name)
		if v == "" {
			return -1, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, badRequest("%s %q is not a version (0 or more)", name, v)
		}
		return n, nil
	}
	var rerr *RequestError
	if p.startV, rerr = version("startingVersion"); rerr != nil {
		return p, rerr
	}
	if p.endV, rerr = version("endingVersion"); rerr != nil {
		return p, rerr
	}
	if v := q.Get("startingTimestamp"); v != "" {
		if p.startV >= 0 {
			return p, badRequest("give startingVersion or startingTimestamp, not both")
		}
		if p.startT, rerr = parseTimestamp("startingTimestamp", v); rerr != nil {
			return p, rerr
		}
	}
	if v := q.Get("endingTimestamp"); v != "" {
		if p.endV >= 0 {
			return p, badRequest("give endingVersion or endingTimestamp, not both")
		}
		if p.endT, rerr = parseTimestamp("endingTimestamp", v); rerr != nil {
			return p, rerr
		}
	}
	if p.startV < 0 && p.startT.IsZero() {
		return p, badRequest("give startingVersion or startingTimestamp")
	}
	if p.startV >= 0 && p.endV >= 0 && p.endV < p.startV {
		return p, badRequest("endingVersion %d is before startingVersion %d", p.endV, p.startV)
	}
	p.historicalMetadata = strings.EqualFold(q.Get("includeHistoricalMetadata"), "true") // Python sends True
	p.historicalProtocol = strings.EqualFold(q.Get("includeHistoricalProtocol"), "true")
	if v := q.Get("maxFiles"); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n <= 0 {
			return p, badRequest("maxFiles %q is not a positive number", v)
		}
		p.maxFiles = ptr(int32(n))
	}
	if v := q.Get("pageToken"); v != "" {
		p.pageToken = &v
	}
	sum := []string{"startingVersion", "endingVersion", "startingTimestamp", "endingTimestamp", "includeHistoricalMetadata", "includeHistoricalProtocol"}
	var parts []byte
	for _, k := range sum {
		parts = append(append(append(parts, k...), '='), q.Get(k)...)
		parts = append(parts, '&')
	}
	p.checksum = sumOf(parts)
	return p, nil
}

// changeRange resolves the feed's bounds to versions. A starting version
// after the latest is 400; an ending version after it is the latest;
// versions before the table's startVersion are 403.
func (s *Server) changeRange(ctx context.Context, t *tableEntry, latest *deltalog.Snapshot, p changesParams) (int64, int64, error) {
	from, to := p.startV, p.endV
	if !p.startT.IsZero() || !p.endT.IsZero() {
		start := p.startT
		if start.IsZero() {
			start = time.Unix(0, 0)
		}
		f, tt, err := deltalog.VersionsBetween(ctx, t.store, "", start, p.endT)
		if errors.Is(err, deltalog.ErrVersionNotFound) {
			return 0, 0, badRequest("no version of table %s was committed in the time range given (the latest is %d)", t.fullName(), latest.Version())
		}
		if err != nil {
			return 0, 0, fmt.Errorf("sharing: table %s: %w", t.fullName(), err)
		}
		if p.startV < 0 {
			from = f
		}
		if p.endV < 0 && !p.endT.IsZero() {
			to = tt
		}
	}
	if to < 0 || to > latest.Version() {
		to = latest.Version()
	}
	if from > latest.Version() {
		return 0, 0, badRequest("startingVersion %d is after the latest version %d of table %s", from, latest.Version(), t.fullName())
	}
	if from > to {
		return 0, 0, badRequest("the ending bound (version %d) is before the starting bound (version %d)", to, from)
	}
	if rerr := historyAllowed(t, from); rerr != nil {
		return 0, 0, rerr
	}
	return from, to, nil
}
