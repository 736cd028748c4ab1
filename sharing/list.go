package sharing

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// routes builds the handler: every API route behind the access log and
// authentication, the file route (its URLs carry their own signature) and
// /health.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	p := s.cfg.Endpoint
	api := func(pattern string, h http.HandlerFunc) {
		method, path, _ := strings.Cut(pattern, " ")
		mux.HandleFunc(method+" "+p+path, s.authorized(h))
	}
	api("GET /shares", s.listShares)
	api("GET /shares/{share}", s.getShare)
	api("GET /shares/{share}/schemas", s.listSchemas)
	api("GET /shares/{share}/schemas/{schema}/tables", s.listTables)
	api("GET /shares/{share}/all-tables", s.listAllTables)
	api("GET /shares/{share}/schemas/{schema}/tables/{table}/version", s.tableVersion)
	api("HEAD /shares/{share}/schemas/{schema}/tables/{table}", s.tableVersion)
	api("GET /shares/{share}/schemas/{schema}/tables/{table}/metadata", s.tableMetadata)
	api("POST /shares/{share}/schemas/{schema}/tables/{table}/query", s.queryTable)
	api("GET /shares/{share}/schemas/{schema}/tables/{table}/changes", s.tableChanges)
	mux.HandleFunc("GET "+p+"/files/{table}/{key...}", s.serveFile)
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, notFound("no such API: %s %s", r.Method, r.URL.Path))
	})
	return s.logged(mux)
}

// health answers 200 while the server serves and 503 once it is shutting
// down, so that a load balancer stops sending it requests.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if s.draining.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"status":"shutting down"}` + "\n"))
		return
	}
	w.Write([]byte(`{"status":"ok"}` + "\n"))
}

// writeJSON answers 200 with v as JSON.
func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the response types always marshal
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(append(b, '\n'))
}

type shareItem struct {
	Name string `json:"name"`
	ID   string `json:"id,omitempty"`
}

type schemaItem struct {
	Name  string `json:"name"`
	Share string `json:"share"`
}

type tableItem struct {
	Name    string `json:"name"`
	Schema  string `json:"schema"`
	Share   string `json:"share"`
	ShareID string `json:"shareId,omitempty"`
	ID      string `json:"id,omitempty"`
}

type listResponse[T any] struct {
	Items         []T    `json:"items"`
	NextPageToken string `json:"nextPageToken,omitempty"`
}

// listToken is the page token of a listing: the scope it lists and the
// offset of the next item.
type listToken struct {
	Scope  string `json:"s"`
	Offset int    `json:"o"`
}

// page cuts the page the request asks for out of n items of scope: the
// items' offsets [from, to) and the token of the next page ("" at the
// end). maxResults is 0 or more (default DefaultPageSize, capped by the
// configuration's MaxPageSize); a pageToken must come from the same
// listing.
func (s *Server) page(r *http.Request, scope string, n int) (from, to int, next string, err *RequestError) {
	size := DefaultPageSize
	if v := r.URL.Query().Get("maxResults"); v != "" {
		m, perr := strconv.ParseInt(v, 10, 32)
		if perr != nil || m < 0 {
			return 0, 0, "", badRequest("maxResults %q is not a number from 0 to 2147483647", v)
		}
		size = int(m)
	}
	if limit := s.cfg.Limits.MaxPageSize; limit > 0 {
		size = min(size, limit)
	}
	if tok := r.URL.Query().Get("pageToken"); tok != "" {
		var lt listToken
		if e := s.openToken("list", tok, &lt); e != nil || lt.Scope != scope || lt.Offset < 0 {
			return 0, 0, "", badRequest("pageToken is not a token of this listing")
		}
		from = min(lt.Offset, n)
	}
	to = min(from+size, n)
	if to < n {
		next = s.sealToken("list", listToken{Scope: scope, Offset: to})
	}
	return from, to, next, nil
}

// visibleShare returns the share the recipient of r reads by that name.
// A share that does not exist and one that exists for other recipients
// only are answered alike (404, the same message, the same work).
func (s *Server) visibleShare(r *http.Request) (*shareEntry, *RequestError) {
	name := r.PathValue("share")
	se := recipientOf(r.Context()).shares[strings.ToLower(name)]
	if se == nil {
		return nil, notFound("share %q does not exist or is not shared with you", name)
	}
	return se, nil
}

func (s *Server) visibleSchema(r *http.Request) (*schemaEntry, *RequestError) {
	se, err := s.visibleShare(r)
	if err != nil {
		return nil, err
	}
	name := r.PathValue("schema")
	sc := se.schemas[strings.ToLower(name)]
	if sc == nil {
		return nil, notFound("schema %q does not exist in share %q", name, se.cfg.Name)
	}
	return sc, nil
}

func (s *Server) visibleTable(r *http.Request) (*tableEntry, *RequestError) {
	sc, err := s.visibleSchema(r)
	if err != nil {
		return nil, err
	}
	name := r.PathValue("table")
	t := sc.tables[strings.ToLower(name)]
	if t == nil {
		return nil, notFound("table %q does not exist in %s.%s", name, sc.share.cfg.Name, sc.cfg.Name)
	}
	return t, nil
}

func (s *Server) listShares(w http.ResponseWriter, r *http.Request) {
	re := recipientOf(r.Context())
	var all []shareItem
	for _, sh := range s.cfg.Shares { // configuration order
		if sh != nil && re.shares[strings.ToLower(sh.Name)] != nil {
			all = append(all, shareItem{Name: sh.Name, ID: sh.ID})
		}
	}
	from, to, next, err := s.page(r, "shares", len(all))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, listResponse[shareItem]{Items: nonNil(all[from:to]), NextPageToken: next})
}

func (s *Server) getShare(w http.ResponseWriter, r *http.Request) {
	se, err := s.visibleShare(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, map[string]shareItem{"share": {Name: se.cfg.Name, ID: se.cfg.ID}})
}

func (s *Server) listSchemas(w http.ResponseWriter, r *http.Request) {
	se, err := s.visibleShare(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var all []schemaItem
	for _, sc := range se.order {
		all = append(all, schemaItem{Name: sc.cfg.Name, Share: se.cfg.Name})
	}
	from, to, next, err := s.page(r, "schemas/"+strings.ToLower(se.cfg.Name), len(all))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, listResponse[schemaItem]{Items: nonNil(all[from:to]), NextPageToken: next})
}

func (s *Server) listTables(w http.ResponseWriter, r *http.Request) {
	sc, err := s.visibleSchema(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var all []tableItem
	for _, t := range sc.order {
		all = append(all, t.item())
	}
	scope := "tables/" + strings.ToLower(sc.share.cfg.Name) + "/" + strings.ToLower(sc.cfg.Name)
	from, to, next, err := s.page(r, scope, len(all))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, listResponse[tableItem]{Items: nonNil(all[from:to]), NextPageToken: next})
}

func (s *Server) listAllTables(w http.ResponseWriter, r *http.Request) {
	se, err := s.visibleShare(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var all []tableItem
	for _, sc := range se.order {
		for _, t := range sc.order {
			all = append(all, t.item())
		}
	}
	from, to, next, err := s.page(r, "all-tables/"+strings.ToLower(se.cfg.Name), len(all))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, listResponse[tableItem]{Items: nonNil(all[from:to]), NextPageToken: next})
}

func (t *tableEntry) item() tableItem {
	return tableItem{Name: t.cfg.Name, Schema: t.schemaName(), Share: t.shareName(), ShareID: t.schema.share.cfg.ID, ID: t.cfg.ID}
}

// nonNil makes an empty page an empty JSON array rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
