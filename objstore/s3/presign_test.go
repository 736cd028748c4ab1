package s3

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/objstore/cloudtest"
)

// TestPresign: MinIO serves the presigned URL, Range included, and
// refuses it once expired; the URL holds no secret key; a ttl over seven
// days is refused.
func TestPresign(t *testing.T) {
	s, err := New(t.Context(), newBucket(t), cloudtest.Name("run-"))
	if err != nil {
		t.Fatal(err)
	}
	secret := os.Getenv("AWS_SECRET_ACCESS_KEY")
	if secret == os.Getenv("AWS_ACCESS_KEY_ID") {
		secret = "" // MinIO's default user: the access key id, public in every URL, is the secret too
	}
	cloudtest.CheckPresign(t, s, 2*time.Second, true, secret)
	if _, err := s.PresignGet(t.Context(), "k", 8*24*time.Hour); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("presign for 8 days: %v", err)
	}
}
