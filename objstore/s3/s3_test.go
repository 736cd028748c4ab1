package s3

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/objstore/objstoretest"
)

// newBucket creates a fresh bucket on the test's S3 server and returns its
// name. The server's data folder is thrown away with the server.
func newBucket(t *testing.T) string {
	t.Helper()
	cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
	s, err := New(t.Context(), "unused", "")
	if err != nil {
		t.Fatal(err)
	}
	bucket := cloudtest.Name("lakelog-")
	if _, err := s.Client().CreateBucket(t.Context(), &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	return bucket
}

func TestConformance(t *testing.T) {
	bucket := newBucket(t)
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := New(t.Context(), bucket, cloudtest.Name("run-"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestConformanceBucketRoot runs the suite on stores that own a whole
// bucket, with no prefix.
func TestConformanceBucketRoot(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := New(t.Context(), newBucket(t), "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, objstoretest.WithRaceRounds(20))
}

// isConditionalPut reports whether r is a PutObject with If-None-Match: *.
func isConditionalPut(r *http.Request) bool {
	return r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*"
}

// TestLostResponse: a conditional PUT whose response is lost
// (cloudtest.CheckLostResponse).
func TestLostResponse(t *testing.T) {
	bucket := newBucket(t)
	cloudtest.CheckLostResponse(t, isConditionalPut, func(t *testing.T, intercept cloudtest.Interceptor) objstore.Store {
		proxy := cloudtest.NewProxy(t, os.Getenv("AWS_ENDPOINT_URL"), intercept)
		s, err := New(t.Context(), bucket, cloudtest.Name("lost-"), WithEndpoint(proxy.URL))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// conflictBody is S3's answer to a conditional write that raced another.
const conflictBody = `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>ConditionalRequestConflict</Code><Message>A conflicting conditional operation is currently in progress against this resource. Please try again.</Message></Error>`

func answerConflict(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusConflict)
	io.WriteString(w, conflictBody)
}

// TestConditionalRequestConflict checks that a 409 ConditionalRequestConflict
// is retried, and only a bounded number of times.
func TestConditionalRequestConflict(t *testing.T) {
	bucket := newBucket(t)
	for _, tc := range []struct {
		name      string
		conflicts int32 // how many conditional PUTs get a 409 before one passes
		wantErr   bool
	}{
		{"Transient", 3, false},
		{"Persistent", 1000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var puts atomic.Int32
			proxy := cloudtest.NewProxy(t, os.Getenv("AWS_ENDPOINT_URL"), func(w http.ResponseWriter, r *http.Request, forward cloudtest.Forward) {
				if isConditionalPut(r) && puts.Add(1) <= tc.conflicts {
					io.Copy(io.Discard, r.Body)
					answerConflict(w)
					return
				}
				cloudtest.Relay(w, r, forward)
			})
			s, err := New(t.Context(), bucket, cloudtest.Name("conflict-"), WithEndpoint(proxy.URL))
			if err != nil {
				t.Fatal(err)
			}
			err = s.Put(t.Context(), "k", strings.NewReader("v"), objstore.PutOptions{IfAbsent: true})
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("Put after %d conflicts: %v", tc.conflicts, err)
				}
				if got := puts.Load(); got != tc.conflicts+1 {
					t.Errorf("sent %d conditional PUTs, want %d", got, tc.conflicts+1)
				}
				return
			}
			if err == nil || errors.Is(err, objstore.ErrExists) {
				t.Fatalf("Put under endless conflicts = %v, want an error that is not ErrExists", err)
			}
			if got := puts.Load(); got != conflictAttempts {
				t.Errorf("sent %d conditional PUTs, want %d", got, conflictAttempts)
			}
		})
	}
}

// TestMultipart puts bodies over the part size, of known and unknown size.
func TestMultipart(t *testing.T) {
	bucket := newBucket(t)
	s, err := New(t.Context(), bucket, "mp", WithPartSize(MinPartSize))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	body := make([]byte, 2*MinPartSize+12345)
	for i := range body {
		body[i] = byte(i * 7)
	}
	for _, tc := range []struct {
		name string
		size int64
		body []byte
	}{
		{"KnownSize", int64(len(body)), body},
		{"UnknownSize", 0, body},
		{"ExactlyOnePart", 0, body[:MinPartSize]},
		{"ExactlyTwoParts", 0, body[:2*MinPartSize]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := io.MultiReader(bytes.NewReader(tc.body)) // hide the bytes.Reader
			if err := s.Put(ctx, tc.name, r, objstore.PutOptions{Size: tc.size}); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.body) {
				t.Fatalf("Get returned %d bytes that differ from the %d put", len(got), len(tc.body))
			}
		})
	}

	// A body that fails after two parts leaves no object and no upload.
	failing := io.MultiReader(bytes.NewReader(body), iotestErrReader{})
	if err := s.Put(ctx, "failed", failing, objstore.PutOptions{}); err == nil {
		t.Fatal("Put with a body that fails after two parts succeeded")
	}
	if _, err := s.Head(ctx, "failed"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Head after the failed multipart Put = %v, want ErrNotFound", err)
	}
	ups, err := s.Client().ListMultipartUploads(ctx, &s3sdk.ListMultipartUploadsInput{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups.Uploads) != 0 {
		t.Errorf("%d multipart uploads left open after a failed Put, want none", len(ups.Uploads))
	}
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("body broke") }

// TestAddressing checks the path-style choice New makes from the
// environment.
func TestAddressing(t *testing.T) {
	for _, tc := range []struct {
		name          string
		endpoint      string
		virtualHosted string
		opts          []Option
		wantPathStyle bool
	}{
		{"AWS", "", "", nil, false},
		{"CustomEndpoint", "http://127.0.0.1:9", "", nil, true},
		{"CustomEndpointVirtualHosted", "http://127.0.0.1:9", "true", nil, false},
		{"Option", "http://127.0.0.1:9", "", []Option{WithPathStyle(false)}, false},
		{"EndpointOption", "", "", []Option{WithEndpoint("http://127.0.0.1:9")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_ENDPOINT_URL", tc.endpoint)
			t.Setenv("AWS_ENDPOINT_URL_S3", "")
			t.Setenv("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", tc.virtualHosted)
			t.Setenv("AWS_REGION", "")
			t.Setenv("AWS_DEFAULT_REGION", "")
			t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
			if tc.endpoint == "" {
				unsetenv(t, "AWS_ENDPOINT_URL")
				unsetenv(t, "AWS_ENDPOINT_URL_S3")
			}
			s, err := New(t.Context(), "b", "", tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			o := s.Client().Options()
			if o.UsePathStyle != tc.wantPathStyle {
				t.Errorf("UsePathStyle = %v, want %v", o.UsePathStyle, tc.wantPathStyle)
			}
			if o.Region != "us-east-1" {
				t.Errorf("Region = %q, want the default us-east-1", o.Region)
			}
		})
	}
}

// TestNoInstanceMetadata checks that with an endpoint and static keys the
// store never asks the EC2 instance metadata service for anything.
func TestNoInstanceMetadata(t *testing.T) {
	bucket := newBucket(t)
	var hits atomic.Int32
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer imds.Close()
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	s, err := New(t.Context(), bucket, "imds")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(t.Context(), "k", strings.NewReader("v"), objstore.PutOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), "k"); err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the instance metadata service was asked %d times, want never", n)
	}
}

// TestOpenURI opens the store by URI, as the command line does.
func TestOpenURI(t *testing.T) {
	bucket := newBucket(t)
	ctx := t.Context()
	s, err := objstore.Open(ctx, fmt.Sprintf("s3://%s/tables/t1/", bucket))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "x.json", strings.NewReader("x"), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	whole, err := New(ctx, bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := whole.Get(ctx, "tables/t1/x.json"); err != nil || string(got) != "x" {
		t.Fatalf("Get(tables/t1/x.json) from the bucket root = %q, %v", got, err)
	}
	if _, err := objstore.Open(ctx, "s3:///nobucket"); err == nil {
		t.Error("Open(s3:///nobucket) succeeded")
	}
}

// TestMissingBucket checks that a missing bucket is not reported as a
// missing key.
func TestMissingBucket(t *testing.T) {
	cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
	s, err := New(t.Context(), cloudtest.Name("missing-"), "", WithCredentials(credentials.NewStaticCredentialsProvider("minioadmin", "minioadmin", "")), WithRegion("us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), "k"); err == nil || errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Get from a missing bucket = %v, want an error that is not ErrNotFound", err)
	}
	for _, err := range s.List(t.Context(), "", "") {
		if err == nil || errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("List of a missing bucket yielded %v, want an error that is not ErrNotFound", err)
		}
	}
}

// unsetenv unsets key for the rest of the test.
func unsetenv(t *testing.T, key string) {
	t.Setenv(key, "")
	os.Unsetenv(key)
}

// TestListUTF16Order lists names that UTF-16 order and byte order (S3's
// and the contract's) sort differently.
func TestListUTF16Order(t *testing.T) {
	s, err := New(t.Context(), newBucket(t), "order")
	if err != nil {
		t.Fatal(err)
	}
	cloudtest.CheckListOrder(t, s)
}

// TestStreamingWriterBoundedMemory streams 200 MB to MinIO through
// objstore.NewWriter, in writes of 1 MiB from one reused buffer, and
// samples the Go heap meanwhile: the upload is multipart (parts of
// DefaultPartSize, DefaultPartConcurrency in flight), so the heap stays
// near those parts and the writer's buffer, far below the object. Then the object's size and a
// range of its bytes are checked. The peak is logged; the bound is
// generous against GC timing, not a speed claim.
func TestStreamingWriterBoundedMemory(t *testing.T) {
	bucket := newBucket(t)
	s, err := New(t.Context(), bucket, cloudtest.Name("stream-"))
	if err != nil {
		t.Fatal(err)
	}
	const total = 200 << 20
	chunk := make([]byte, 1<<20)
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	w, err := objstore.NewWriter(t.Context(), s, "big.bin", objstore.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range total / len(chunk) {
		for j := range chunk {
			chunk[j] = byte(i + j)
		}
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-sampled
	grown := int64(peak.Load()) - int64(base.HeapInuse)
	t.Logf("200 MB streamed: heap in use grew by at most %.1f MB (part size %d MB)", float64(grown)/(1<<20), DefaultPartSize>>20)
	if limit := int64((DefaultPartConcurrency+2)*DefaultPartSize + 32<<20); grown > limit {
		t.Errorf("heap grew by %d bytes while streaming 200 MB; want under %d (the parts in flight, not the object)", grown, limit)
	}
	info, err := s.Head(t.Context(), "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != total {
		t.Fatalf("size %d, want %d", info.Size, total)
	}
	got, err := s.GetRange(t.Context(), "big.bin", 150<<20+7, 16)
	if err != nil {
		t.Fatal(err)
	}
	for k, b := range got {
		if off := 150<<20 + 7 + k; b != byte(off>>20+off&(1<<20-1)) {
			t.Fatalf("byte %d is %d, want %d", off, b, byte(off>>20+off&(1<<20-1)))
		}
	}
}
