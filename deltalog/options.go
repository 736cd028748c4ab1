package deltalog

import (
	"maps"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
)

// CommitOption configures the commit of an operation: the one set of
// commit options (delta-rs's CommitProperties) that every operation takes
// as it is, whether it appends (writer), rewrites rows (dml), changes the
// schema (schema), keeps the table in shape (maintenance) or converts a
// folder (convert), and that a transaction built by hand takes
// (Snapshot.NewTransaction, Create). What the operation writes is its
// own business; how its commit is recorded, made idempotent, isolated
// and followed up is decided here:
//
//   - WithAppTransaction: exactly-once writes of an application;
//   - WithOperationParameters and WithUserMetadata: what commitInfo
//     records beside the operation's own parameters;
//   - WithIsolation: the isolation level;
//   - WithHooks and WithPostCommit: the post-commit hooks and how they run;
//   - WithMaxAttempts, WithClock, WithChecker: the commit loop's knobs.
type CommitOption func(*Transaction)

// commitConfig holds the commit loop's knobs.
type commitConfig struct {
	maxAttempts  int
	maxIOretries int
	backoff      time.Duration
	maxBackoff   time.Duration
	checker      Checker
	now          func() time.Time
	postCommit   PostCommitMode
	hooks        []PostCommitHook         // WithHooks, run after the registered ones
	params       map[string]any           // WithOperationParameters
	appTxn       *actions.Txn             // WithAppTransaction (Version and AppID only)
	domains      []actions.DomainMetadata // WithDomainMetadata
	features     []string                 // WithTableFeatures
	optErr       error                    // a commit option the transaction refused
}

// WithAppTransaction makes the commit idempotent for an application, as
// Spark's txnAppId/txnVersion: it records txn(appID, version), and when
// the table already holds version or a newer one for appID the
// operation writes and commits nothing and its result has AlreadyApplied
// set (Transaction.AlreadyApplied, which every operation asks before it
// works; a concurrent writer that wins the race with it is caught at
// commit). An empty appID is refused at commit.
func WithAppTransaction(appID string, version int64) CommitOption {
	return func(t *Transaction) { t.cfg.appTxn = &actions.Txn{AppID: appID, Version: version} }
}

// WithDomainMetadata records configuration under a user domain in the
// commit (Transaction.SetDomainMetadata): state a writer keeps with the
// table and changes with each commit, such as a source's position that,
// unlike an app transaction's version, need not only grow. A domain
// named delta.* is refused before the operation works (Transaction.Start).
func WithDomainMetadata(domain, configuration string) CommitOption {
	return func(t *Transaction) {
		t.cfg.domains = append(t.cfg.domains, actions.DomainMetadata{Domain: domain, Configuration: configuration})
	}
}

// WithTableFeatures adds table features to the protocol in the commit,
// as Spark's delta.feature.NAME = 'supported' does (EnableFeatures): for
// the features that the commit's metadata needs but that are added only
// when asked for, such as timestampNtz for a new timestamp_ntz column. A
// feature lakelog does not know is refused before the operation works
// (Transaction.Start).
func WithTableFeatures(names ...string) CommitOption {
	return func(t *Transaction) { t.cfg.features = append(t.cfg.features, names...) }
}

// WithOperationParameters adds entries to commitInfo.operationParameters;
// they win over the operation's own.
func WithOperationParameters(params map[string]any) CommitOption {
	return func(t *Transaction) {
		if t.cfg.params == nil {
			t.cfg.params = map[string]any{}
		}
		maps.Copy(t.cfg.params, params)
	}
}

// WithUserMetadata sets commitInfo.userMetadata (Spark's
// spark.databricks.delta.commitInfo.userMetadata).
func WithUserMetadata(s string) CommitOption { return func(t *Transaction) { t.info.UserMetadata = s } }

// WithIsolation sets the transaction's isolation level; the default is the
// table's delta.isolationLevel, else WriteSerializable.
func WithIsolation(l conflict.Isolation) CommitOption {
	return func(t *Transaction) { t.isolation = l }
}

// WithHooks adds post-commit hooks to run after the commit lands, after
// the built-in and registered ones (RegisterHook), in order.
func WithHooks(hooks ...PostCommitHook) CommitOption {
	return func(t *Transaction) { t.cfg.hooks = append(t.cfg.hooks, hooks...) }
}

// PostCommitMode says how a commit runs its post-commit hooks. A failed
// hook never fails the commit.
type PostCommitMode string

const (
	// PostCommitAsync (the default) runs them in the background, one
	// after another: see CommitResult.WaitHooks.
	PostCommitAsync PostCommitMode = "async"
	// PostCommitSync runs them before Commit returns; their failures are
	// still only reported (CommitResult.WaitHooks), never fatal.
	PostCommitSync PostCommitMode = "sync"
	// PostCommitOff runs none: no checkpoint, no Iceberg metadata, no
	// manifest (benchmarks, and writers that run them themselves).
	PostCommitOff PostCommitMode = "off"
)

// WithPostCommit sets how the commit runs its post-commit hooks. Any other
// mode than the three PostCommitMode values makes Commit fail before it
// writes anything.
func WithPostCommit(mode PostCommitMode) CommitOption {
	return func(t *Transaction) { t.cfg.postCommit = mode }
}

// WithMaxAttempts bounds how many versions a transaction tries before it
// gives up with ErrTooManyAttempts (default 1000: Spark retries much longer).
func WithMaxAttempts(n int) CommitOption { return func(t *Transaction) { t.cfg.maxAttempts = n } }

// WithChecker replaces the conflict checker.
func WithChecker(c Checker) CommitOption { return func(t *Transaction) { t.cfg.checker = c } }

// WithClock sets the clock used for commit timestamps, removes and txn
// timestamps, and the checkpoint the commit triggers (tests).
func WithClock(now func() time.Time) CommitOption { return func(t *Transaction) { t.cfg.now = now } }
