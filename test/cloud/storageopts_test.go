package cloud

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/azure"
	"github.com/lakelog/lakelog/objstore/cloudtest"
)

// Storage options configure one table's store instead of the
// environment: each store is given an endpoint through them (a proxy in
// front of the emulator, which the environment does not name), and the
// table's requests must go through it; a wrong secret given through them
// is used (access denied); an unknown key is refused.

var optsSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)

// checkThroughOptions creates and reopens a table at uri with opts and
// checks that the proxy saw its requests.
func checkThroughOptions(t *testing.T, uri string, opts map[string]string, seen *atomic.Int64) {
	t.Helper()
	ctx := context.Background()
	if _, err := lakelog.Create(ctx, uri, optsSchema, lakelog.WithStorageOptions(opts)); err != nil {
		t.Fatal(err)
	}
	tb, err := lakelog.Open(ctx, uri, lakelog.WithStorageOptions(opts))
	if err != nil || tb.Version() != 0 {
		t.Fatalf("open: %v", err)
	}
	if seen.Load() == 0 {
		t.Fatal("no request went to the endpoint the storage options name")
	}
	bad := map[string]string{"NO_SUCH_OPTION": "x"}
	if _, err := lakelog.Open(ctx, uri, lakelog.WithStorageOptions(bad)); err == nil || !strings.Contains(err.Error(), "NO_SUCH_OPTION") {
		t.Errorf("an unknown option: %v", err)
	}
}

// countingProxy is a proxy to upstream that counts requests.
func countingProxy(t *testing.T, upstream string, host string) (*cloudtest.Proxy, *atomic.Int64) {
	var n atomic.Int64
	p := cloudtest.NewProxy(t, upstream, func(w http.ResponseWriter, r *http.Request, forward cloudtest.Forward) {
		n.Add(1)
		if host != "" {
			r.Host = host
		}
		cloudtest.Relay(w, r, forward)
	})
	return p, &n
}

func TestStorageOptionsS3(t *testing.T) {
	bucket := newFaultBucket(t)
	proxy, seen := countingProxy(t, os.Getenv("AWS_ENDPOINT_URL"), "")
	uri := "s3://" + bucket + "/" + cloudtest.Name("opts-")
	checkThroughOptions(t, uri, map[string]string{"AWS_ENDPOINT_URL": proxy.URL}, seen)
	wrong := map[string]string{"aws_access_key_id": os.Getenv("AWS_ACCESS_KEY_ID"), "aws_secret_access_key": "wrong-secret"}
	if _, err := lakelog.Open(context.Background(), uri, lakelog.WithStorageOptions(wrong)); !errors.Is(err, objstore.ErrAccessDenied) {
		t.Errorf("a wrong secret in the options: %v, want access denied", err)
	}
}

func TestStorageOptionsGCS(t *testing.T) {
	upstream := cloudtest.Require(t, "STORAGE_EMULATOR_HOST", "fake-gcs-server")
	proxy, seen := countingProxy(t, "http://"+upstream, upstream)
	checkThroughOptions(t, "gs://lakelog/"+cloudtest.Name("opts-"), map[string]string{"STORAGE_EMULATOR_HOST": proxy.Host}, seen)
}

func TestStorageOptionsAzure(t *testing.T) {
	cs := cloudtest.Require(t, "AZURE_STORAGE_CONNECTION_STRING", "Azurite")
	ctx := context.Background()
	container := cloudtest.Name("lakelog-opts-")
	st, err := azure.New(ctx, container, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Container().Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Container().Delete(context.Background(), nil) })
	var endpoint string
	for part := range strings.SplitSeq(cs, ";") {
		if v, ok := strings.CutPrefix(part, "BlobEndpoint="); ok {
			endpoint = v
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil || endpoint == "" {
		t.Fatalf("no BlobEndpoint in AZURE_STORAGE_CONNECTION_STRING: %v", err)
	}
	proxy, seen := countingProxy(t, u.Scheme+"://"+u.Host, "")
	viaProxy := strings.Replace(cs, "BlobEndpoint="+endpoint, "BlobEndpoint="+proxy.URL+u.Path, 1)
	checkThroughOptions(t, "az://"+container+"/"+cloudtest.Name("opts-"), map[string]string{"AZURE_STORAGE_CONNECTION_STRING": viaProxy}, seen)
}
