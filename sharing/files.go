package sharing

import (
	"context"
	"crypto/hmac"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// ErrOutsideTable is wrapped when a table's log names a file the server
// will not give out: an absolute path, a path that leaves the table's
// root ("../other/x.parquet"), or one inside _delta_log/.
var ErrOutsideTable = errors.New("sharing: file outside the table")

// checkShareKey reports whether key, a store key of the table's store
// (rooted at the table), names a data or deletion vector file of the
// table: not empty, relative, no NUL byte or backslash, no empty, "." or
// ".." segment, not in the log folder.
func checkShareKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "://") {
		return fmt.Errorf("%w: %q is not a relative path", ErrOutsideTable, key)
	}
	if strings.ContainsAny(key, "\x00\\") {
		return fmt.Errorf("%w: %q holds a NUL byte or a backslash", ErrOutsideTable, key)
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%w: %q has an empty, '.' or '..' segment", ErrOutsideTable, key)
		}
	}
	if strings.HasPrefix(key, deltalog.LogDir) {
		return fmt.Errorf("%w: %q is in the log folder", ErrOutsideTable, key)
	}
	return nil
}

// fileKey is the store key of a file action's path, refused unless it
// lies under the table's root.
func fileKey(snap *deltalog.Snapshot, path string) (string, error) {
	key := snap.TablePath(path)
	if err := checkShareKey(key); err != nil {
		return "", err
	}
	return key, nil
}

// signedURL is a URL that reads one file until expires.
type signedURL struct {
	url     string
	expires time.Time
}

// signer makes the URLs of one response: the store's own presigned URLs
// (S3, GCS, Azure) or, for stores without them (local disk), URLs of this
// server's file route carrying an HMAC of the table, key and expiry.
type signer struct {
	s       *Server
	t       *tableEntry
	base    string // the API's base URL, for local files
	expires time.Time
	ttl     time.Duration
	// minExpires is the earliest expiry of the URLs made.
	minExpires time.Time
	signed     int
}

func (s *Server) newSigner(r *http.Request, t *tableEntry) *signer {
	ttl := s.cfg.URLExpiry()
	return &signer{s: s, t: t, base: s.baseURL(r), ttl: ttl, expires: s.now().Add(ttl).Truncate(time.Second)}
}

// baseURL is the API's URL as the client reached it: the configured
// public URL, else the request's scheme and host and the endpoint.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return s.cfg.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + s.cfg.Endpoint
}

// sign returns a URL for key, already checked with checkShareKey.
func (g *signer) sign(ctx context.Context, key string) (signedURL, error) {
	var u signedURL
	if _, ok := g.t.store.(objstore.Presigner); ok {
		p, err := objstore.PresignGet(ctx, g.t.store, key, g.ttl)
		if err != nil {
			return u, err
		}
		u = signedURL{p.URL, p.Expires}
	} else {
		u = signedURL{g.s.localURL(g.base, g.t, key, g.expires), g.expires}
	}
	if g.minExpires.IsZero() || u.expires.Before(g.minExpires) {
		g.minExpires = u.expires
	}
	g.signed++
	return u, nil
}

// signDV returns dv with its file replaced by a URL (storage type "p"),
// as delta-format clients read it; an inline vector is returned as is.
func (g *signer) signDV(ctx context.Context, snap *deltalog.Snapshot, dv *actions.DeletionVector) (*actions.DeletionVector, error) {
	if dv == nil || dv.StorageType == deletionvector.StorageInline {
		return dv, nil
	}
	key, err := deletionvector.Key(g.t.store, snap.Root(), dv)
	if err != nil {
		return nil, fmt.Errorf("%w: deletion vector: %w", ErrOutsideTable, err)
	}
	if err := checkShareKey(key); err != nil {
		return nil, err
	}
	u, err := g.sign(ctx, key)
	if err != nil {
		return nil, err
	}
	out := *dv
	out.StorageType, out.PathOrInlineDv = "p", u.url
	return &out, nil
}

// localURL is the file route's URL of key in table t, valid until
// expires. Its query follows an Azure SAS's names (sp=r: read; se: the
// expiry, here in Unix seconds; sig: the signature): delta-kernel-rs, the
// reader of delta-format clients, fetches a file URL over plain HTTP only
// when its query has one of the presigned URL keys it knows (sp among
// them), and otherwise reads the URL's path from its own store.
func (s *Server) localURL(base string, t *tableEntry, key string, expires time.Time) string {
	segs := strings.Split(key, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	exp := strconv.FormatInt(expires.Unix(), 10)
	sig := hex.EncodeToString(s.fileMAC(t.cfg.ID, key, exp))
	return base + "/files/" + url.PathEscape(t.cfg.ID) + "/" + strings.Join(segs, "/") + "?sp=r&se=" + exp + "&sig=" + sig
}

func (s *Server) fileMAC(tableID, key, exp string) []byte {
	return s.mac("file", []byte(tableID+"\x00"+key+"\x00"+exp))
}

// serveFile answers a local file URL: the signature must match the
// table, key and expiry, the expiry must be ahead, and the key must lie
// under the table's root. Range requests are served. A URL that does not
// verify or has expired is 403, as a cloud store answers it.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	tableID, key := r.PathValue("table"), r.PathValue("key")
	exp, sig := r.URL.Query().Get("se"), r.URL.Query().Get("sig")
	mac, err := hex.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, s.fileMAC(tableID, key, exp)) {
		writeError(w, r, forbidden("the file URL's signature does not verify"))
		return
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !s.now().Before(time.Unix(unix, 0)) {
		writeError(w, r, forbidden("the file URL expired"))
		return
	}
	var t *tableEntry
	for _, te := range s.tables {
		if te.cfg.ID == tableID {
			t = te
		}
	}
	if t == nil || checkShareKey(key) != nil {
		writeError(w, r, notFound("no such file"))
		return
	}
	obj, err := objstore.OpenObject(r.Context(), t.store, key, -1)
	if errors.Is(err, objstore.ErrNotFound) {
		writeError(w, r, notFound("no such file"))
		return
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer obj.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", "private, max-age="+strconv.FormatInt(max(0, unix-s.now().Unix()), 10))
	http.ServeContent(w, r, "", time.Time{}, io.NewSectionReader(obj, 0, obj.Size()))
}
