package sharing

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// ConfigVersion is the version of the share configuration this package
// reads (the reference server's `version: 1`).
const ConfigVersion = 1

// Defaults of the configuration.
const (
	DefaultPort            = 8080
	DefaultEndpoint        = "/delta-sharing"
	DefaultURLExpiry       = time.Hour
	DefaultMaxRequestBytes = 1 << 20
	DefaultRatePerSecond   = 50
	DefaultRateBurst       = 100
	DefaultPageSize        = 500
	// MinTokenLength is the shortest bearer token the configuration
	// accepts, in characters: `lakelog share profile --new-token` makes
	// 43 (32 random bytes, base64url).
	MinTokenLength = 32
	// maxNameLength is the protocol's limit on share, schema and table
	// names.
	maxNameLength = 255
)

// ErrConfig is wrapped by every error of LoadConfig and ParseConfig.
var ErrConfig = errors.New("sharing: invalid configuration")

// Config is the server's configuration, read from YAML by [LoadConfig].
// Its field names are the reference server's (delta-sharing-server.yaml)
// where it has one; recipients, limits and the access log are lakelog's.
type Config struct {
	// Version must be 1.
	Version int `yaml:"version"`
	// Host and Port are where the server listens (host "" for every
	// interface; default port 8080).
	Host string `yaml:"host"`
	Port int    `yaml:"port"`
	// Endpoint is the URL prefix of the REST API (default /delta-sharing).
	Endpoint string `yaml:"endpoint"`
	// PublicURL is the server's URL as recipients reach it, prefix
	// included (https://sharing.example.com/delta-sharing): written into
	// profiles and the file URLs of local tables. Without it, URLs are
	// made from each request's Host header.
	PublicURL string `yaml:"publicUrl"`
	// PreSignedURLTimeoutSeconds is how long a file URL stays valid
	// (default 3600).
	PreSignedURLTimeoutSeconds int64 `yaml:"preSignedUrlTimeoutSeconds"`
	// SSL makes the server speak HTTPS only.
	SSL *SSLConfig `yaml:"ssl"`
	// Limits bound requests.
	Limits Limits `yaml:"limits"`
	// AccessLog is where one JSON line per request goes: "stderr"
	// (default), "stdout", "off", or a file path (appended).
	AccessLog string `yaml:"accessLog"`
	// URLSigningKeyFile holds the secret (at least 32 bytes) that signs
	// the file URLs of local tables and page tokens, so that they stay
	// valid across restarts and between servers sharing the file. Without
	// it a random key is made at start.
	URLSigningKeyFile string `yaml:"urlSigningKeyFile"`
	// Shares are what the server shares.
	Shares []*ShareConfig `yaml:"shares"`
	// Recipients hold the bearer tokens and the shares each may read.
	Recipients []*RecipientConfig `yaml:"recipients"`

	file string // the file the configuration was read from, for messages
}

// SSLConfig names the PEM certificate (chain) and private key files.
type SSLConfig struct {
	CertificateFile    string `yaml:"certificateFile"`
	CertificateKeyFile string `yaml:"certificateKeyFile"`
	pos                position
}

// Limits bound what one request or one recipient may ask.
type Limits struct {
	// MaxRequestBytes bounds a request body (default 1 MiB); a larger one
	// is answered 413.
	MaxRequestBytes int64 `yaml:"maxRequestBytes"`
	// RequestsPerSecond and Burst bound each recipient's request rate
	// (a token bucket; defaults 50 and 100); over it, 429 with
	// Retry-After. Failed authentications are bounded per client address
	// by the same numbers.
	RequestsPerSecond float64 `yaml:"requestsPerSecond"`
	Burst             int     `yaml:"burst"`
	// MaxPageSize caps maxResults and maxFiles (default 500 for lists and
	// unbounded pages of files; set to bound both).
	MaxPageSize int `yaml:"maxPageSize"`
}

// ShareConfig is one share: named schemas of tables.
type ShareConfig struct {
	Name    string          `yaml:"name"`
	ID      string          `yaml:"id"`
	Schemas []*SchemaConfig `yaml:"schemas"`
	pos     position
}

// SchemaConfig is one schema of a share.
type SchemaConfig struct {
	Name   string         `yaml:"name"`
	Tables []*TableConfig `yaml:"tables"`
	pos    position
}

// TableConfig is one shared table.
type TableConfig struct {
	Name string `yaml:"name"`
	// Location is the table's URI or path, as lakelog's commands take it.
	Location string `yaml:"location"`
	// ID identifies the table to clients (default: a UUID derived from
	// the share, schema and table names).
	ID string `yaml:"id"`
	// HistoryShared lets recipients read past versions (version,
	// timestamp, startingVersion) and, unless ChangeDataFeedShared says
	// otherwise, the change data feed, as the reference server's
	// historyShared does.
	HistoryShared bool `yaml:"historyShared"`
	// StartVersion is the first version recipients may read: earlier
	// versions, and a latest version before it, are refused.
	StartVersion int64 `yaml:"startVersion"`
	// ChangeDataFeedShared turns the change feed of a history-shared
	// table off (false) or on (true, the default with HistoryShared).
	ChangeDataFeedShared *bool `yaml:"changeDataFeedShared"`
	pos                  position
}

// RecipientConfig is one recipient: its bearer token and its shares.
type RecipientConfig struct {
	Name string `yaml:"name"`
	// Token is the bearer token in clear; TokenSHA256 the hex SHA-256 of
	// it (so the file does not hold the token). Exactly one is set.
	Token       string `yaml:"token"`
	TokenSHA256 string `yaml:"tokenSha256"`
	// ExpirationTime is when the token stops working (RFC 3339); none:
	// never.
	ExpirationTime string `yaml:"expirationTime"`
	// Shares are the names of the shares the recipient reads.
	Shares []string `yaml:"shares"`

	expires   time.Time
	tokenHash [sha256.Size]byte
	pos       position
}

// Expires is when the recipient's token stops working; zero for never.
func (r *RecipientConfig) Expires() time.Time { return r.expires }

// ChangeFeedShared reports whether recipients may read the table's change
// data feed.
func (t *TableConfig) ChangeFeedShared() bool {
	if t.ChangeDataFeedShared != nil {
		return *t.ChangeDataFeedShared
	}
	return t.HistoryShared
}

// URLExpiry is how long file URLs stay valid.
func (c *Config) URLExpiry() time.Duration {
	return time.Duration(c.PreSignedURLTimeoutSeconds) * time.Second
}

// File is the file the configuration was read from ("" when parsed from
// bytes without a name).
func (c *Config) File() string { return c.file }

// Recipient returns the recipient named name (case-insensitive).
func (c *Config) Recipient(name string) (*RecipientConfig, bool) {
	for _, r := range c.Recipients {
		if strings.EqualFold(r.Name, name) {
			return r, true
		}
	}
	return nil, false
}

// LoadConfig reads and checks the configuration file path. Errors wrap
// ErrConfig and name the file, line and column of what is wrong.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return ParseConfig(path, b)
}

// ParseConfig reads and checks a configuration; name is used in messages.
// Unknown keys are errors (a misspelt key would otherwise be ignored
// silently), as are a missing version, names the protocol does not allow,
// duplicate names (names are case-insensitive), tables without a
// location, recipients without a token or naming a share that does not
// exist, two recipients with one token, and negative limits.
func ParseConfig(name string, data []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrConfig, name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	c := &Config{file: name}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%w: %s: the file is empty", ErrConfig, name)
	}
	if err := decodeStrict(doc.Content[0], c); err != nil {
		return nil, fmt.Errorf("%w: %s:%w", ErrConfig, name, err)
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%w: %s:%w", ErrConfig, name, err)
	}
	return c, nil
}

// position is where an item starts in the file.
type position struct{ line, col int }

// errAt is an error at a position; its text starts with "line:col: " so
// that it follows "file:".
func errAt(p position, format string, args ...any) error {
	return fmt.Errorf("%d:%d: %s", p.line, p.col, fmt.Sprintf(format, args...))
}

func (s *ShareConfig) UnmarshalYAML(n *yaml.Node) error {
	s.pos = position{n.Line, n.Column}
	type plain ShareConfig
	return decodeStrict(n, (*plain)(s))
}

func (s *SchemaConfig) UnmarshalYAML(n *yaml.Node) error {
	s.pos = position{n.Line, n.Column}
	type plain SchemaConfig
	return decodeStrict(n, (*plain)(s))
}

func (t *TableConfig) UnmarshalYAML(n *yaml.Node) error {
	t.pos = position{n.Line, n.Column}
	type plain TableConfig
	return decodeStrict(n, (*plain)(t))
}

func (r *RecipientConfig) UnmarshalYAML(n *yaml.Node) error {
	r.pos = position{n.Line, n.Column}
	type plain RecipientConfig
	return decodeStrict(n, (*plain)(r))
}

func (s *SSLConfig) UnmarshalYAML(n *yaml.Node) error {
	s.pos = position{n.Line, n.Column}
	type plain SSLConfig
	return decodeStrict(n, (*plain)(s))
}

func (l *Limits) UnmarshalYAML(n *yaml.Node) error {
	type plain Limits
	return decodeStrict(n, (*plain)(l))
}

// decodeStrict decodes the mapping n into the struct v points to, after
// checking that every key of n names one of v's yaml fields.
func decodeStrict(n *yaml.Node, v any) error {
	if n.Kind != yaml.MappingNode {
		return errAt(position{n.Line, n.Column}, "expected a mapping of keys to values")
	}
	known := map[string]bool{}
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			known[tag] = true
		}
	}
	names := slices.Sorted(maps.Keys(known))
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !known[k.Value] {
			return errAt(position{k.Line, k.Column}, "unknown key %q (known: %s)", k.Value, strings.Join(names, ", "))
		}
	}
	if err := n.Decode(v); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			// "line 3: cannot unmarshal ..." into "3:1: cannot ..."
			msg := strings.TrimPrefix(te.Errors[0], "line ")
			if l, rest, ok := strings.Cut(msg, ": "); ok {
				return fmt.Errorf("%s: %s", l, rest)
			}
			return errors.New(te.Errors[0])
		}
		return errAt(position{n.Line, n.Column}, "%v", err)
	}
	return nil
}

// check validates the decoded configuration and fills defaults.
func (c *Config) check() error {
	if c.Version == 0 {
		return errAt(position{1, 1}, "'version' must be given (version: %d)", ConfigVersion)
	}
	if c.Version < 0 || c.Version > ConfigVersion {
		return errAt(position{1, 1}, "version %d is not supported: this server reads version %d", c.Version, ConfigVersion)
	}
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Port < 0 || c.Port > 65535 {
		return errAt(position{1, 1}, "port %d is not a TCP port", c.Port)
	}
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}
	c.Endpoint = "/" + strings.Trim(c.Endpoint, "/")
	if c.Endpoint == "/" {
		c.Endpoint = ""
	}
	if strings.ContainsAny(c.Endpoint, "{}?#% ") {
		return errAt(position{1, 1}, "endpoint %q may hold only a plain path", c.Endpoint)
	}
	if c.PublicURL != "" && !strings.HasPrefix(c.PublicURL, "http://") && !strings.HasPrefix(c.PublicURL, "https://") {
		return errAt(position{1, 1}, "publicUrl %q must start with http:// or https://", c.PublicURL)
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	switch {
	case c.PreSignedURLTimeoutSeconds == 0:
		c.PreSignedURLTimeoutSeconds = int64(DefaultURLExpiry / time.Second)
	case c.PreSignedURLTimeoutSeconds < 0:
		return errAt(position{1, 1}, "preSignedUrlTimeoutSeconds %d is negative", c.PreSignedURLTimeoutSeconds)
	case c.PreSignedURLTimeoutSeconds > 7*24*3600:
		return errAt(position{1, 1}, "preSignedUrlTimeoutSeconds %d is over 7 days, the longest S3 and GCS sign for", c.PreSignedURLTimeoutSeconds)
	}
	if err := c.checkLimits(); err != nil {
		return err
	}
	if c.SSL != nil && (c.SSL.CertificateFile == "" || c.SSL.CertificateKeyFile == "") {
		return errAt(c.SSL.pos, "ssl needs both certificateFile and certificateKeyFile")
	}
	if c.AccessLog == "" {
		c.AccessLog = "stderr"
	}
	if err := c.checkShares(); err != nil {
		return err
	}
	return c.checkRecipients()
}

func (c *Config) checkLimits() error {
	l := &c.Limits
	if l.MaxRequestBytes < 0 || l.RequestsPerSecond < 0 || l.Burst < 0 || l.MaxPageSize < 0 {
		return errAt(position{1, 1}, "limits may not be negative")
	}
	if l.MaxRequestBytes == 0 {
		l.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if l.RequestsPerSecond == 0 {
		l.RequestsPerSecond = DefaultRatePerSecond
	}
	if l.Burst == 0 {
		l.Burst = DefaultRateBurst
	}
	return nil
}

// checkName checks a share, schema or table name against the protocol's
// rules (PROTOCOL.md "Names").
func checkName(p position, kind, name string, dotAllowed bool) error {
	if name == "" {
		return errAt(p, "%s has no name", kind)
	}
	if !utf8.ValidString(name) {
		return errAt(p, "%s name %q is not UTF-8", kind, name)
	}
	if utf8.RuneCountInString(name) > maxNameLength {
		return errAt(p, "%s name %q is longer than %d characters", kind, name, maxNameLength)
	}
	for _, r := range name {
		switch {
		case r == ' ' || r == '/' || r < 0x20 || r == 0x7f:
			return errAt(p, "%s name %q holds %q, which names may not (no space, '/' or control characters)", kind, name, r)
		case r == '.' && !dotAllowed:
			return errAt(p, "%s name %q holds '.', which schema and table names may not", kind, name)
		}
	}
	return nil
}

func (c *Config) checkShares() error {
	shares := map[string]bool{}
	for _, sh := range c.Shares {
		if sh == nil {
			continue
		}
		if err := checkName(sh.pos, "share", sh.Name, true); err != nil {
			return err
		}
		if shares[strings.ToLower(sh.Name)] {
			return errAt(sh.pos, "share %q is defined twice (names are case-insensitive)", sh.Name)
		}
		shares[strings.ToLower(sh.Name)] = true
		schemas := map[string]bool{}
		for _, sc := range sh.Schemas {
			if sc == nil {
				continue
			}
			if err := checkName(sc.pos, "schema", sc.Name, false); err != nil {
				return err
			}
			if schemas[strings.ToLower(sc.Name)] {
				return errAt(sc.pos, "schema %q is defined twice in share %q", sc.Name, sh.Name)
			}
			schemas[strings.ToLower(sc.Name)] = true
			tables := map[string]bool{}
			for _, t := range sc.Tables {
				if t == nil {
					continue
				}
				if err := checkName(t.pos, "table", t.Name, false); err != nil {
					return err
				}
				if tables[strings.ToLower(t.Name)] {
					return errAt(t.pos, "table %q is defined twice in %s.%s", t.Name, sh.Name, sc.Name)
				}
				tables[strings.ToLower(t.Name)] = true
				if strings.TrimSpace(t.Location) == "" {
					return errAt(t.pos, "table %s.%s.%s has no location", sh.Name, sc.Name, t.Name)
				}
				if t.StartVersion < 0 {
					return errAt(t.pos, "table %s.%s.%s: startVersion %d is negative", sh.Name, sc.Name, t.Name, t.StartVersion)
				}
				if t.ChangeFeedShared() && !t.HistoryShared {
					return errAt(t.pos, "table %s.%s.%s: changeDataFeedShared needs historyShared: true", sh.Name, sc.Name, t.Name)
				}
				if t.ID == "" {
					t.ID = derivedID(sh.Name, sc.Name, t.Name)
				}
			}
		}
	}
	return nil
}

func (c *Config) checkRecipients() error {
	names := map[string]bool{}
	tokens := map[[sha256.Size]byte]string{}
	for _, r := range c.Recipients {
		if r == nil {
			continue
		}
		if r.Name == "" {
			return errAt(r.pos, "recipient has no name")
		}
		if names[strings.ToLower(r.Name)] {
			return errAt(r.pos, "recipient %q is defined twice", r.Name)
		}
		names[strings.ToLower(r.Name)] = true
		switch {
		case r.Token != "" && r.TokenSHA256 != "":
			return errAt(r.pos, "recipient %q: give token or tokenSha256, not both", r.Name)
		case r.Token != "":
			if len(r.Token) < MinTokenLength {
				return errAt(r.pos, "recipient %q: token is %d characters; at least %d are required", r.Name, len(r.Token), MinTokenLength)
			}
			r.tokenHash = sha256.Sum256([]byte(r.Token))
		case r.TokenSHA256 != "":
			b, err := hex.DecodeString(r.TokenSHA256)
			if err != nil || len(b) != sha256.Size {
				return errAt(r.pos, "recipient %q: tokenSha256 must be 64 hex digits", r.Name)
			}
			copy(r.tokenHash[:], b)
		default:
			return errAt(r.pos, "recipient %q has no token (token or tokenSha256)", r.Name)
		}
		if other, dup := tokens[r.tokenHash]; dup {
			return errAt(r.pos, "recipients %q and %q have the same token", other, r.Name)
		}
		tokens[r.tokenHash] = r.Name
		if r.ExpirationTime != "" {
			t, err := time.Parse(time.RFC3339, r.ExpirationTime)
			if err != nil {
				return errAt(r.pos, "recipient %q: expirationTime %q is not an RFC 3339 time (2027-01-01T00:00:00Z)", r.Name, r.ExpirationTime)
			}
			r.expires = t
		}
		for _, s := range r.Shares {
			if c.share(s) == nil {
				return errAt(r.pos, "recipient %q: share %q is not defined", r.Name, s)
			}
		}
	}
	return nil
}

// share returns the share named name (case-insensitive), or nil.
func (c *Config) share(name string) *ShareConfig {
	for _, s := range c.Shares {
		if s != nil && strings.EqualFold(s.Name, name) {
			return s
		}
	}
	return nil
}
