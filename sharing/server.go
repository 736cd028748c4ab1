package sharing

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// Server serves the shares of one configuration. It is safe for
// concurrent use; build it with [New].
type Server struct {
	cfg        *Config
	open       StoreOpener
	now        func() time.Time
	log        *slog.Logger
	closeLog   io.Closer
	signKey    []byte
	tables     []*tableEntry
	shares     map[string]*shareEntry // lower-case name
	recipients []*recipientEntry
	limits     *limiters
	draining   atomic.Bool
	handler    http.Handler
}

// StoreOpener opens the store of a table location; the table's root is
// the store's root.
type StoreOpener func(ctx context.Context, location string) (objstore.Store, error)

// Option configures New.
type Option func(*Server)

// WithStoreOpener opens table locations with open instead of objstore.Open
// (tests serve tables from memory this way).
func WithStoreOpener(open StoreOpener) Option { return func(s *Server) { s.open = open } }

// WithClock makes the server read the time from now (token and URL
// expiry).
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// WithAccessLog writes the access log to w instead of where the
// configuration says.
func WithAccessLog(w io.Writer) Option {
	return func(s *Server) { s.log = slog.New(slog.NewJSONHandler(w, nil)) }
}

// WithSigningKey sets the secret that signs local file URLs and page
// tokens (at least 32 bytes), instead of the configuration's file or a
// random one.
func WithSigningKey(key []byte) Option { return func(s *Server) { s.signKey = key } }

// shareEntry, schemaEntry and tableEntry are the configuration indexed by
// lower-case name, in the configuration's order.
type shareEntry struct {
	cfg     *ShareConfig
	schemas map[string]*schemaEntry
	order   []*schemaEntry
}

type schemaEntry struct {
	share  *shareEntry
	cfg    *SchemaConfig
	tables map[string]*tableEntry
	order  []*tableEntry
}

type tableEntry struct {
	schema *schemaEntry
	cfg    *TableConfig
	store  objstore.Store
	// location is the store's location, as messages and metadata name
	// the table.
	location string
}

func (t *tableEntry) shareName() string  { return t.schema.share.cfg.Name }
func (t *tableEntry) schemaName() string { return t.schema.cfg.Name }
func (t *tableEntry) fullName() string {
	return t.shareName() + "." + t.schemaName() + "." + t.cfg.Name
}

// New checks that every table of cfg opens as a Delta table and returns
// the server. Errors name the table and where the configuration defines
// it.
func New(ctx context.Context, cfg *Config, opts ...Option) (*Server, error) {
	s := &Server{cfg: cfg, now: time.Now, shares: map[string]*shareEntry{}}
	s.open = func(ctx context.Context, loc string) (objstore.Store, error) { return objstore.Open(ctx, loc) }
	for _, o := range opts {
		o(s)
	}
	if err := s.setupLog(); err != nil {
		return nil, err
	}
	if err := s.setupSigningKey(); err != nil {
		return nil, err
	}
	if err := s.openTables(ctx); err != nil {
		s.Close()
		return nil, err
	}
	for _, rc := range cfg.Recipients {
		if rc == nil {
			continue
		}
		re := &recipientEntry{cfg: rc, shares: map[string]*shareEntry{}}
		for _, name := range rc.Shares {
			re.shares[strings.ToLower(name)] = s.shares[strings.ToLower(name)]
		}
		s.recipients = append(s.recipients, re)
	}
	s.limits = newLimiters(cfg.Limits.RequestsPerSecond, cfg.Limits.Burst, s.now)
	s.handler = s.routes()
	return s, nil
}

func (s *Server) setupLog() error {
	if s.log != nil {
		return nil
	}
	var w io.Writer
	switch s.cfg.AccessLog {
	case "", "stderr":
		w = os.Stderr
	case "stdout":
		w = os.Stdout
	case "off":
		w = io.Discard
	default:
		f, err := os.OpenFile(s.cfg.AccessLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o640)
		if err != nil {
			return fmt.Errorf("sharing: access log: %w", err)
		}
		w, s.closeLog = f, f
	}
	s.log = slog.New(slog.NewJSONHandler(w, nil))
	return nil
}

func (s *Server) setupSigningKey() error {
	switch {
	case s.signKey != nil:
	case s.cfg.URLSigningKeyFile != "":
		b, err := os.ReadFile(s.cfg.URLSigningKeyFile)
		if err != nil {
			return fmt.Errorf("sharing: urlSigningKeyFile: %w", err)
		}
		s.signKey = []byte(strings.TrimSpace(string(b)))
	default:
		s.signKey = make([]byte, 32)
		rand.Read(s.signKey)
	}
	if len(s.signKey) < 32 {
		return fmt.Errorf("sharing: the URL signing key is %d bytes; at least 32 are required", len(s.signKey))
	}
	return nil
}

// openTables opens every table's store and its latest snapshot, so that
// a wrong location fails at start rather than at a recipient's request.
func (s *Server) openTables(ctx context.Context) error {
	for _, sh := range s.cfg.Shares {
		if sh == nil {
			continue
		}
		se := &shareEntry{cfg: sh, schemas: map[string]*schemaEntry{}}
		s.shares[strings.ToLower(sh.Name)] = se
		for _, sc := range sh.Schemas {
			if sc == nil {
				continue
			}
			sce := &schemaEntry{share: se, cfg: sc, tables: map[string]*tableEntry{}}
			se.schemas[strings.ToLower(sc.Name)] = sce
			se.order = append(se.order, sce)
			for _, tc := range sc.Tables {
				if tc == nil {
					continue
				}
				te := &tableEntry{schema: sce, cfg: tc}
				if err := s.openTable(ctx, te); err != nil {
					return err
				}
				sce.tables[strings.ToLower(tc.Name)] = te
				sce.order = append(sce.order, te)
				s.tables = append(s.tables, te)
			}
		}
	}
	return nil
}

func (s *Server) openTable(ctx context.Context, te *tableEntry) error {
	where := fmt.Sprintf("%s:%d:%d: table %s", s.cfg.file, te.cfg.pos.line, te.cfg.pos.col, te.fullName())
	st, err := s.open(ctx, te.cfg.Location)
	if err != nil {
		return fmt.Errorf("sharing: %s: %w", where, err)
	}
	te.store, te.location = st, objstore.Location(st)
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		return fmt.Errorf("sharing: %s: %w", where, err)
	}
	if err := snap.Supports(deltalog.OpScan); err != nil {
		return fmt.Errorf("sharing: %s: %w", where, err)
	}
	return nil
}

// Close releases the stores of the tables and the access log file.
func (s *Server) Close() error {
	var errs []error
	for _, t := range s.tables {
		errs = append(errs, objstore.Close(t.store))
	}
	if s.closeLog != nil {
		errs = append(errs, s.closeLog.Close())
	}
	return errors.Join(errs...)
}

// Handler is the server's HTTP handler: the REST API under the
// configuration's endpoint, the files of local tables under
// ENDPOINT/files/, and GET /health.
func (s *Server) Handler() http.Handler { return s.handler }

// ShutdownTimeout bounds how long Serve waits for requests in flight when
// its context ends.
const ShutdownTimeout = 30 * time.Second

// Serve answers on ln until ctx ends, then stops accepting, lets requests
// in flight finish (up to ShutdownTimeout; /health answers 503 meanwhile)
// and returns nil. With an ssl configuration it speaks TLS only.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	if s.cfg.SSL != nil {
		cert, err := tls.LoadX509KeyPair(s.cfg.SSL.CertificateFile, s.cfg.SSL.CertificateKeyFile)
		if err != nil {
			return fmt.Errorf("sharing: ssl: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	s.draining.Store(true)
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-done
	return err
}

// Addr is the address the configuration says to listen on.
func (c *Config) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// derivedID is the id of a table the configuration gives none: a UUID
// derived from its names, stable across restarts.
func derivedID(share, schema, table string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("lakelog-sharing:"+strings.ToLower(share)+"."+
		strings.ToLower(schema)+"."+strings.ToLower(table))).String()
}

// requestInfo is what the access log records of a request, filled as the
// request is served.
type requestInfo struct {
	recipient string
	err       error
	files     int
}

type infoKey struct{}

func requestInfoOf(r *http.Request) *requestInfo {
	info, _ := r.Context().Value(infoKey{}).(*requestInfo)
	return info
}

// statusWriter records the status and bytes of a response, and passes
// Flush through for streamed answers.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// logged wraps h with the access log (one JSON line per request: method,
// path, status, bytes, duration, recipient, files signed, the error of a
// refused or failed request; never a token or a query string, which may
// hold signatures) and with recovery from panics, answered 500.
func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				info.err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
				if sw.status == 0 {
					writeError(sw, r, info.err)
				}
			}
			attrs := []any{
				slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", sw.status), slog.Int64("bytes", sw.bytes),
				slog.Float64("seconds", time.Since(start).Seconds()),
				slog.String("remote", r.RemoteAddr),
			}
			if info.recipient != "" {
				attrs = append(attrs, slog.String("recipient", info.recipient))
			}
			if info.files > 0 {
				attrs = append(attrs, slog.Int("files", info.files))
			}
			if info.err != nil {
				attrs = append(attrs, slog.String("error", info.err.Error()))
			}
			s.log.Info("request", attrs...)
		}()
		h.ServeHTTP(sw, r)
	})
}
