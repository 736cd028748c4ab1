package sharing

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// recipientEntry is a recipient and the shares it reads, by lower-case
// name.
type recipientEntry struct {
	cfg    *RecipientConfig
	shares map[string]*shareEntry
}

type recipientKey struct{}

func recipientOf(ctx context.Context) *recipientEntry {
	re, _ := ctx.Value(recipientKey{}).(*recipientEntry)
	return re
}

// maxTokenLength bounds the bearer token read from a request.
const maxTokenLength = 1024

// authenticate finds the recipient of the request's bearer token. Every
// recipient's token hash is compared, in constant time and without
// stopping at a match, so the time taken says nothing of which tokens
// exist. A missing, malformed, unknown or expired token is 401.
func (s *Server) authenticate(r *http.Request) (*recipientEntry, *RequestError) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if h == "" {
		return nil, &RequestError{http.StatusUnauthorized, CodeUnauthenticated, "no bearer token: send Authorization: Bearer TOKEN"}
	}
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || len(token) > maxTokenLength ||
		strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
		return nil, &RequestError{http.StatusUnauthorized, CodeUnauthenticated, "malformed Authorization header: want Bearer TOKEN"}
	}
	sum := sha256.Sum256([]byte(token))
	var found *recipientEntry
	for _, re := range s.recipients {
		if subtle.ConstantTimeCompare(sum[:], re.cfg.tokenHash[:]) == 1 {
			found = re
		}
	}
	if found == nil {
		return nil, &RequestError{http.StatusUnauthorized, CodeUnauthenticated, "the bearer token is not valid"}
	}
	if exp := found.cfg.expires; !exp.IsZero() && !s.now().Before(exp) {
		return nil, &RequestError{http.StatusUnauthorized, CodeUnauthenticated, "the bearer token expired at " + exp.UTC().Format(time.RFC3339)}
	}
	return found, nil
}

// authorized wraps an API handler: the per-address bound on failed
// authentications, the bearer token, the recipient's rate limit and the
// request size limit.
func (s *Server) authorized(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		addr := clientAddr(r)
		if wait, ok := s.limits.failuresAllowed(addr); !ok {
			tooMany(w, r, wait)
			return
		}
		re, rerr := s.authenticate(r)
		if rerr != nil {
			s.limits.failed(addr)
			writeError(w, r, rerr)
			return
		}
		requestInfoOf(r).recipient = re.cfg.Name
		if wait, ok := s.limits.allow(re.cfg.Name); !ok {
			tooMany(w, r, wait)
			return
		}
		if r.ContentLength > s.cfg.Limits.MaxRequestBytes {
			writeError(w, r, &RequestError{http.StatusRequestEntityTooLarge, CodeRequestTooLarge,
				"the request body is " + strconv.FormatInt(r.ContentLength, 10) + " bytes; at most " +
					strconv.FormatInt(s.cfg.Limits.MaxRequestBytes, 10) + " are accepted"})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.Limits.MaxRequestBytes)
		h(w, r.WithContext(context.WithValue(r.Context(), recipientKey{}, re)))
	}
}

func tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration) {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, r, &RequestError{http.StatusTooManyRequests, CodeResourceExhausted,
		"too many requests: retry in " + strconv.Itoa(secs) + "s"})
}

// clientAddr is the request's remote IP (no port).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// limiters are the token buckets of recipients and of client addresses
// whose authentication failed.
type limiters struct {
	rps   rate.Limit
	burst int
	now   func() time.Time
	mu    struct {
		sync.Mutex
		recipients map[string]*rate.Limiter
		failures   map[string]*rate.Limiter
	}
}

// maxFailureEntries bounds the addresses whose failures are remembered;
// past it the memory starts afresh.
const maxFailureEntries = 10000

func newLimiters(rps float64, burst int, now func() time.Time) *limiters {
	l := &limiters{rps: rate.Limit(rps), burst: burst, now: now}
	l.mu.recipients = map[string]*rate.Limiter{}
	l.mu.failures = map[string]*rate.Limiter{}
	return l
}

// allow takes a token of the recipient's bucket; when there is none it
// says how long until there is.
func (l *limiters) allow(name string) (time.Duration, bool) {
	l.mu.Lock()
	lim, ok := l.mu.recipients[name]
	if !ok {
		lim = rate.NewLimiter(l.rps, l.burst)
		l.mu.recipients[name] = lim
	}
	l.mu.Unlock()
	now := l.now()
	res := lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

// failuresAllowed reports whether addr may try to authenticate: its
// bucket of failures is not empty.
func (l *limiters) failuresAllowed(addr string) (time.Duration, bool) {
	l.mu.Lock()
	lim := l.mu.failures[addr]
	l.mu.Unlock()
	if lim == nil {
		return 0, true
	}
	now := l.now()
	if lim.TokensAt(now) >= 1 {
		return 0, true
	}
	return time.Duration((1 - lim.TokensAt(now)) / float64(l.rps) * float64(time.Second)), false
}

// failed takes a token of addr's bucket of failures.
func (l *limiters) failed(addr string) {
	l.mu.Lock()
	lim, ok := l.mu.failures[addr]
	if !ok {
		if len(l.mu.failures) >= maxFailureEntries {
			l.mu.failures = map[string]*rate.Limiter{}
		}
		lim = rate.NewLimiter(l.rps, l.burst)
		l.mu.failures[addr] = lim
	}
	l.mu.Unlock()
	lim.AllowN(l.now(), 1)
}
