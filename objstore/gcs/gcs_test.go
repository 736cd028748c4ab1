package gcs

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/objstore/objstoretest"
)

// newBucket creates a fresh bucket on the test's GCS emulator and returns
// its name. The emulator's data folder is thrown away with it.
func newBucket(t *testing.T) string {
	t.Helper()
	cloudtest.Require(t, "STORAGE_EMULATOR_HOST", "fake-gcs-server")
	s := newStore(t, "unused", "")
	bucket := cloudtest.Name("lakelog-")
	if err := s.Client().Bucket(bucket).Create(t.Context(), "lakelog", nil); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	return bucket
}

// newStore returns a store that is closed when the test ends.
func newStore(t *testing.T, bucket, prefix string, opts ...Option) *Store {
	t.Helper()
	s, err := New(t.Context(), bucket, prefix, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	bucket := newBucket(t)
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		return newStore(t, bucket, cloudtest.Name("run-"))
	})
}

// TestConformanceBucketRoot runs the suite on stores that own a whole
// bucket, with no prefix.
func TestConformanceBucketRoot(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		return newStore(t, newBucket(t), "")
	}, objstoretest.WithRaceRounds(20))
}

// isConditionalUpload reports whether r uploads an object with the
// precondition that it does not exist.
func isConditionalUpload(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/upload/") &&
		r.URL.Query().Get("ifGenerationMatch") == "0"
}

// TestLostResponse: a conditional upload whose response is lost
// (cloudtest.CheckLostResponse).
func TestLostResponse(t *testing.T) {
	bucket := newBucket(t)
	upstream := cloudtest.Require(t, "STORAGE_EMULATOR_HOST", "fake-gcs-server")
	cloudtest.CheckLostResponse(t, isConditionalUpload, func(t *testing.T, intercept cloudtest.Interceptor) objstore.Store {
		proxy := cloudtest.NewProxy(t, "http://"+upstream, func(w http.ResponseWriter, r *http.Request, forward cloudtest.Forward) {
			r.Host = upstream // fake-gcs-server takes another host for a bucket name
			intercept(w, r, forward)
		})
		t.Setenv("STORAGE_EMULATOR_HOST", proxy.Host)
		return newStore(t, bucket, cloudtest.Name("lost-"))
	})
}

// TestLargePut puts bodies over the one-request limit, of known and
// unknown size, through resumable uploads.
func TestLargePut(t *testing.T) {
	s := newStore(t, newBucket(t), "large")
	ctx := t.Context()
	body := make([]byte, maxOneShot+300_000)
	for i := range body {
		body[i] = byte(i * 13)
	}
	for _, tc := range []struct {
		name     string
		size     int64
		ifAbsent bool
	}{
		{"KnownSize", int64(len(body)), false},
		{"UnknownSize", 0, false},
		{"IfAbsent", int64(len(body)), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := strings.NewReader(string(body))
			if err := s.Put(ctx, tc.name, struct{ *strings.Reader }{r}, objstore.PutOptions{Size: tc.size, IfAbsent: tc.ifAbsent}); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(body) {
				t.Fatalf("Get returned %d bytes that differ from the %d put", len(got), len(body))
			}
		})
	}

	// A body that fails after the first chunk went up leaves no object.
	failing := io.MultiReader(strings.NewReader(string(body)), errReader{})
	if err := s.Put(ctx, "failed", failing, objstore.PutOptions{}); err == nil {
		t.Fatal("Put with a body that fails after one chunk succeeded")
	}
	if _, err := s.Head(ctx, "failed"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Head after the failed resumable Put = %v, want ErrNotFound", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("body broke") }

// TestOpenURI opens the store by URI, as the command line does.
func TestOpenURI(t *testing.T) {
	bucket := newBucket(t)
	ctx := t.Context()
	s, err := objstore.Open(ctx, fmt.Sprintf("gs://%s/tables/t1/", bucket))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "x.json", strings.NewReader("x"), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	whole := newStore(t, bucket, "")
	if got, err := whole.Get(ctx, "tables/t1/x.json"); err != nil || string(got) != "x" {
		t.Fatalf("Get(tables/t1/x.json) from the bucket root = %q, %v", got, err)
	}
	if _, err := objstore.Open(ctx, "gs:///nobucket"); err == nil {
		t.Error("Open(gs:///nobucket) succeeded")
	}
}

// TestMissingBucket checks that listing a missing bucket fails rather than
// yielding nothing.
func TestMissingBucket(t *testing.T) {
	cloudtest.Require(t, "STORAGE_EMULATOR_HOST", "fake-gcs-server")
	s := newStore(t, cloudtest.Name("missing-"), "")
	n := 0
	for _, err := range s.List(t.Context(), "", "") {
		n++
		if err == nil {
			t.Error("List of a missing bucket yielded an object")
		}
	}
	if n != 1 {
		t.Errorf("List of a missing bucket yielded %d times, want one error", n)
	}
}

// TestListUTF16Order lists names that UTF-16 order and byte order (GCS's
// and the contract's) sort differently.
func TestListUTF16Order(t *testing.T) {
	cloudtest.CheckListOrder(t, newStore(t, newBucket(t), "order"))
}
