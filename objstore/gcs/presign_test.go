package gcs

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/cloudtest"
)

// TestPresign: fake-gcs-server serves the object through its V4 signed
// URL (signed with a service account key made here), Range included. The
// emulator does not check signatures or expiry, so expiry is checked
// against GCS only by the URL's own X-Goog-Expires.
func TestPresign(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	s := newStore(t, newBucket(t), cloudtest.Name("run-"), WithSigningKey("sharing@lakelog-test.iam.gserviceaccount.com", pemKey))
	cloudtest.CheckPresign(t, s, time.Minute, false, string(pemKey))
	u, err := s.PresignGet(t.Context(), "k", time.Minute)
	if err != nil || !strings.Contains(u.URL, "X-Goog-Expires=") || !strings.Contains(u.URL, "X-Goog-Signature=") {
		t.Errorf("signed URL %q: %v", u.URL, err)
	}
	if _, err := s.PresignGet(t.Context(), "k", 8*24*time.Hour); err == nil {
		t.Error("presign for 8 days succeeded")
	}
	// Without a key (the emulator's client has no credentials) it cannot sign.
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	bare := newStore(t, "some-bucket", "")
	if _, err := bare.PresignGet(t.Context(), "k", time.Minute); !errors.Is(err, objstore.ErrPresignUnsupported) {
		t.Errorf("presign without a key: %v, want ErrPresignUnsupported", err)
	}
}
