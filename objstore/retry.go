package objstore

import "time"

// RetryPolicy tunes how the cloud stores (s3, gcs, azure) retry requests
// and detect stalls. A zero field takes its default. Whatever the policy,
// a Put with IfAbsent (a commit) is sent exactly once per call: a retry
// after a lost response would answer "exists" for the caller's own create.
type RetryPolicy struct {
	// Attempts is the number of tries of one request, in all: 6.
	Attempts int
	// BaseDelay and MaxDelay bound the backoff between tries: before try
	// k+1 a random wait below min(MaxDelay, BaseDelay·2^(k-1)). Defaults
	// 50ms and 5s.
	BaseDelay, MaxDelay time.Duration
	// Deadline bounds all tries of one read (Get, GetRange) together:
	// 5 minutes.
	Deadline time.Duration
	// StallTimeout is how long a request may make no progress (no byte of
	// its body sent, no response headers after it, no byte of the
	// response body received) before it is cancelled and re-issued: 30s.
	StallTimeout time.Duration
}

// WithDefaults returns p with its zero fields set to the defaults.
func (p RetryPolicy) WithDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = 6
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 50 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 5 * time.Second
	}
	if p.Deadline <= 0 {
		p.Deadline = 5 * time.Minute
	}
	if p.StallTimeout <= 0 {
		p.StallTimeout = 30 * time.Second
	}
	return p
}
