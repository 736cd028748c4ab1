package gcs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"cloud.google.com/go/storage"

	"github.com/lakelog/lakelog/objstore"
)

// maxPresign is the longest a V4 signed URL may stay valid.
const maxPresign = 7 * 24 * time.Hour

var _ objstore.Presigner = (*Store)(nil)

// signingKey is a service account's identity and private key (PEM), which
// sign V4 URLs without a request to Google.
type signingKey struct {
	accessID   string
	privateKey []byte
}

// WithSigningKey makes PresignGet sign URLs with this service account
// (its client_email and PEM private key) instead of the key New finds.
func WithSigningKey(accessID string, privateKeyPEM []byte) Option {
	return func(o *options) { o.signing = &signingKey{accessID: accessID, privateKey: privateKeyPEM} }
}

// signingKeyFromEnv reads the service account key file that
// GOOGLE_APPLICATION_CREDENTIALS names, when it is one; nil otherwise
// (the client's own credentials then decide, as storage's SignedURL
// detects them).
func signingKeyFromEnv(settings objstore.Options) (*signingKey, error) {
	path := settings.Get("GOOGLE_APPLICATION_CREDENTIALS")
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gcs: GOOGLE_APPLICATION_CREDENTIALS: %w", err)
	}
	var sa struct {
		Type        string `json:"type"`
		ClientEmail string `json:"client_email"`
		PrivateKey  string `json:"private_key"`
	}
	if err := json.Unmarshal(b, &sa); err != nil {
		return nil, fmt.Errorf("gcs: GOOGLE_APPLICATION_CREDENTIALS %s: %w", path, err)
	}
	if sa.Type != "service_account" || sa.ClientEmail == "" || sa.PrivateKey == "" {
		return nil, nil
	}
	return &signingKey{accessID: sa.ClientEmail, privateKey: []byte(sa.PrivateKey)}, nil
}

// PresignGet implements [objstore.Presigner]: a V4 signed URL for GET of
// the object, signed with the key of WithSigningKey, else the service
// account key file GOOGLE_APPLICATION_CREDENTIALS names, else whatever the
// client's credentials can sign with (storage's own detection, the IAM
// signBlob API included). Under STORAGE_EMULATOR_HOST the URL names the
// emulator. GCS accepts at most seven days; a longer ttl is refused.
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration) (objstore.PresignedURL, error) {
	name, err := s.root.Name(key)
	if err != nil {
		return objstore.PresignedURL{}, fmt.Errorf("gcs: presign: %w", err)
	}
	if ttl > maxPresign {
		return objstore.PresignedURL{}, fmt.Errorf("gcs: presign %s: expiry %v is over GCS's limit of %v", key, ttl, maxPresign)
	}
	expires := time.Now().Add(ttl).Truncate(time.Second)
	opts := &storage.SignedURLOptions{Method: "GET", Expires: expires, Scheme: storage.SigningSchemeV4}
	signing := s.signing
	if signing == nil {
		if signing, err = signingKeyFromEnv(s.settings); err != nil {
			return objstore.PresignedURL{}, err
		}
	}
	if signing != nil {
		opts.GoogleAccessID, opts.PrivateKey = signing.accessID, signing.privateKey
	}
	if host := s.settings.Get("STORAGE_EMULATOR_HOST"); host != "" {
		rest, isHTTP := strings.CutPrefix(host, "http://")
		opts.Hostname = strings.TrimPrefix(rest, "https://")
		opts.Insecure = isHTTP || !strings.HasPrefix(host, "https://")
	}
	u, err := s.bucket.SignedURL(name, opts)
	if err != nil {
		return objstore.PresignedURL{}, fmt.Errorf("gcs: presign %s: %w: %w", key, objstore.ErrPresignUnsupported, err)
	}
	return objstore.PresignedURL{URL: u, Expires: expires}, nil
}
