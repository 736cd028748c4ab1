package azure

import (
	"regexp"
	"testing"
	"time"

	"github.com/lakelog/lakelog/objstore/cloudtest"
)

// TestPresign: Azurite serves the blob through its SAS URL, Range
// included, and refuses it once expired; the URL holds no account key.
func TestPresign(t *testing.T) {
	s, err := New(t.Context(), newContainer(t), cloudtest.Name("run-"))
	if err != nil {
		t.Fatal(err)
	}
	key := ""
	if m := regexp.MustCompile(`AccountKey=([^;]+)`).FindStringSubmatch(connectionString(t)); m != nil {
		key = m[1]
	}
	cloudtest.CheckPresign(t, s, 3*time.Second, true, key)
}
