package sharing

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// ErrNoToken is returned by Profile for a recipient whose configuration
// holds only the token's hash.
var ErrNoToken = errors.New("sharing: the configuration holds only the token's hash")

// Profile is the profile file a recipient's client loads (PROTOCOL.md
// "Profile File Format").
type Profile struct {
	ShareCredentialsVersion int    `json:"shareCredentialsVersion"`
	Endpoint                string `json:"endpoint"`
	BearerToken             string `json:"bearerToken"`
	ExpirationTime          string `json:"expirationTime,omitempty"`
}

// Profile returns the profile of the recipient named name, for a server
// reached at endpoint (the API's URL, prefix included; "" for
// PublicURL, else the configured host, port and endpoint over http or
// https). token replaces the configured token when not empty (a new one
// whose hash goes into the configuration); without it, a recipient
// configured with tokenSha256 only fails with ErrNoToken.
func (c *Config) Profile(name, endpoint, token string) (*Profile, error) {
	r, ok := c.Recipient(name)
	if !ok {
		return nil, fmt.Errorf("sharing: %s: no recipient %q", c.file, name)
	}
	if token == "" {
		token = r.Token
	}
	if token == "" {
		return nil, fmt.Errorf("%w of recipient %q (%s)", ErrNoToken, r.Name, c.file)
	}
	if endpoint == "" {
		endpoint = c.endpointURL()
	}
	p := &Profile{ShareCredentialsVersion: 1, Endpoint: endpoint, BearerToken: token}
	if !r.expires.IsZero() {
		p.ExpirationTime = r.expires.UTC().Format(time.RFC3339)
	}
	return p, nil
}

// endpointURL is the API's URL as the configuration gives it.
func (c *Config) endpointURL() string {
	if c.PublicURL != "" {
		return c.PublicURL
	}
	host := c.Host
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	scheme := "http"
	if c.SSL != nil {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(c.Port)) + c.Endpoint
}

// NewToken makes a bearer token (32 random bytes, base64url: 43
// characters) and the hex SHA-256 the configuration's tokenSha256 takes.
func NewToken() (token, hash string) {
	b := make([]byte, 32)
	rand.Read(b)
	token = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(token))
	return token, hex.EncodeToString(sum[:])
}
