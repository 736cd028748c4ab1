package cloud

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/azure"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/objstore/gcs"
	"github.com/lakelog/lakelog/objstore/s3"
)

// A commit that the store refuses before applying it (a missing bucket,
// a wrong secret, no credentials) fails with that cause, which is not
// ErrCommitUnknown: nothing was written, and the user has nothing to
// recover. Only a reply that is lost leaves the outcome unknown: the
// commit then ends recognized as its own or with ErrCommitUnknown, never
// with a plain error.

// refusal is a store whose commits must fail with want.
type refusal struct {
	name  string
	store func(t *testing.T) objstore.Store
	want  error
}

// checkRefusals creates a table in each store and checks the error.
func checkRefusals(t *testing.T, cases []refusal) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			err := createTable(ctx, c.store(t))
			switch {
			case err == nil:
				t.Fatal("the commit succeeded")
			case errors.Is(err, deltalog.ErrCommitUnknown):
				t.Fatalf("%v: the store refused the commit, so its outcome is known", err)
			case !errors.Is(err, c.want) || !errors.Is(err, objstore.ErrRefused):
				t.Fatalf("%v: want %v", err, c.want)
			}
			t.Log(err)
		})
	}
}

// checkLostReply loses the reply of the create's conditional write
// (the store's is picked by conditional) and checks that the commit ends
// recognized as its own or unknown, and that the table has version 0.
func checkLostReply(t *testing.T, conditional func(*http.Request) bool, open func(t *testing.T, intercept cloudtest.Interceptor) (faulty, clean objstore.Store)) {
	lost := false
	faulty, clean := open(t, func(w http.ResponseWriter, r *http.Request, forward cloudtest.Forward) {
		if conditional(r) && !lost {
			lost = true
			cloudtest.FailAfter(http.StatusServiceUnavailable)(w, r, forward)
			return
		}
		cloudtest.Relay(w, r, forward)
	})
	ctx := t.Context()
	err := createTable(ctx, faulty)
	var unknown *deltalog.CommitUnknownError
	if err != nil && !errors.As(err, &unknown) {
		t.Fatalf("create whose reply was lost = %v; want success or ErrCommitUnknown", err)
	}
	if !lost {
		t.Fatal("no conditional write was intercepted")
	}
	snap, err := deltalog.Open(ctx, clean, "tbl")
	if err != nil || snap.Version() != 0 {
		t.Fatalf("after the lost reply: %v", err)
	}
}

func createTable(ctx context.Context, st objstore.Store) error {
	schema, err := actions.ParseDDL("id long")
	if err != nil {
		return err
	}
	s, err := actions.SchemaString(schema)
	if err != nil {
		return err
	}
	tx, err := deltalog.Create(st, "tbl", &actions.Metadata{SchemaString: s})
	if err != nil {
		return err
	}
	_, err = tx.Commit(ctx)
	return err
}

func TestRefusedCommitsS3(t *testing.T) {
	bucket := newFaultBucket(t)
	open := func(bucket string, opts ...s3.Option) func(t *testing.T) objstore.Store {
		return func(t *testing.T) objstore.Store {
			st, err := s3.New(t.Context(), bucket, cloudtest.Name("refused-"), opts...)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
	}
	noCredentials := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{}, errors.New("no credentials configured")
	})
	checkRefusals(t, []refusal{
		{"MissingBucket", open(cloudtest.Name("lakelog-missing-")), objstore.ErrNoBucket},
		{"WrongSecret", open(bucket, s3.WithCredentials(credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), "wrong-secret", ""))), objstore.ErrAccessDenied},
		{"NoCredentials", open(bucket, s3.WithCredentials(noCredentials)), objstore.ErrAccessDenied},
		{"Anonymous", open(bucket, s3.WithCredentials(aws.AnonymousCredentials{})), objstore.ErrAccessDenied},
	})
}

func TestRefusedCommitsGCS(t *testing.T) {
	upstream := cloudtest.Require(t, "STORAGE_EMULATOR_HOST", "fake-gcs-server")
	open := func(bucket string, intercept cloudtest.Interceptor) func(t *testing.T) objstore.Store {
		return func(t *testing.T) objstore.Store {
			if intercept != nil {
				proxy := cloudtest.NewProxy(t, "http://"+upstream, func(w http.ResponseWriter, r *http.Request, forward cloudtest.Forward) {
					r.Host = upstream // fake-gcs-server takes another host for a bucket name
					intercept(w, r, forward)
				})
				t.Setenv("STORAGE_EMULATOR_HOST", proxy.Host)
			}
			st, err := gcs.New(t.Context(), bucket, cloudtest.Name("refused-"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
	}
	// fake-gcs-server accepts any credentials; a proxy answers as GCS
	// answers a request signed with a revoked or wrong key.
	unauthorized := func(w http.ResponseWriter, r *http.Request, _ cloudtest.Forward) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"code":401,"message":"Invalid Credentials","errors":[{"message":"Invalid Credentials","domain":"global","reason":"authError"}]}}`))
	}
	checkRefusals(t, []refusal{
		{"MissingBucket", open(cloudtest.Name("lakelog-missing-"), nil), objstore.ErrNoBucket},
		{"WrongCredentials", open("lakelog", unauthorized), objstore.ErrAccessDenied},
	})
	t.Run("LostReply", func(t *testing.T) {
		checkLostReply(t, func(r *http.Request) bool {
			return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/upload/") && r.URL.Query().Get("ifGenerationMatch") == "0"
		}, func(t *testing.T, intercept cloudtest.Interceptor) (objstore.Store, objstore.Store) {
			prefix := cloudtest.Name("lost-")
			clean, err := gcs.New(t.Context(), "lakelog", prefix)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { clean.Close() })
			proxy := cloudtest.NewProxy(t, "http://"+upstream, func(w http.ResponseWriter, r *http.Request, forward cloudtest.Forward) {
				r.Host = upstream
				intercept(w, r, forward)
			})
			t.Setenv("STORAGE_EMULATOR_HOST", proxy.Host)
			faulty, err := gcs.New(t.Context(), "lakelog", prefix)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { faulty.Close() })
			return faulty, clean
		})
	})
}

func TestRefusedCommitsAzure(t *testing.T) {
	cs := cloudtest.Require(t, "AZURE_STORAGE_CONNECTION_STRING", "Azurite")
	field := func(k string) string {
		for part := range strings.SplitSeq(cs, ";") {
			if v, ok := strings.CutPrefix(part, k+"="); ok {
				return v
			}
		}
		return ""
	}
	account, endpoint := field("AccountName"), strings.TrimRight(field("BlobEndpoint"), "/")
	if endpoint == "" {
		endpoint = "http://127.0.0.1:10000/" + account
	}
	ctx := t.Context()
	container := cloudtest.Name("lakelog-refused-")
	good, err := azure.New(ctx, container, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := good.Container().Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { good.Container().Delete(context.Background(), nil) })
	open := func(container string, client func(t *testing.T) *azblob.Client) func(t *testing.T) objstore.Store {
		return func(t *testing.T) objstore.Store {
			var opts []azure.Option
			if client != nil {
				opts = append(opts, azure.WithClient(client(t)))
			}
			st, err := azure.New(t.Context(), container, cloudtest.Name("refused-"), opts...)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
	}
	wrongKey := func(t *testing.T) *azblob.Client {
		cred, err := azblob.NewSharedKeyCredential(account, "d3Jvbmcta2V5") // base64 of "wrong-key"
		if err != nil {
			t.Fatal(err)
		}
		c, err := azblob.NewClientWithSharedKeyCredential(endpoint+"/", cred, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	anonymous := func(t *testing.T) *azblob.Client {
		c, err := azblob.NewClientWithNoCredential(endpoint+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	checkRefusals(t, []refusal{
		{"MissingContainer", open(cloudtest.Name("lakelog-missing-"), nil), objstore.ErrNoBucket},
		{"WrongKey", open(container, wrongKey), objstore.ErrAccessDenied},
		{"NoCredentials", open(container, anonymous), objstore.ErrAccessDenied},
	})
	t.Run("LostReply", func(t *testing.T) {
		checkLostReply(t, func(r *http.Request) bool {
			return r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*"
		}, func(t *testing.T, intercept cloudtest.Interceptor) (objstore.Store, objstore.Store) {
			prefix := cloudtest.Name("lost-")
			clean, err := azure.New(t.Context(), container, prefix)
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(endpoint)
			if err != nil {
				t.Fatal(err)
			}
			proxy := cloudtest.NewProxy(t, u.Scheme+"://"+u.Host, intercept)
			t.Setenv("AZURE_STORAGE_CONNECTION_STRING", strings.Replace(cs, "BlobEndpoint="+field("BlobEndpoint"), "BlobEndpoint="+proxy.URL+u.Path, 1))
			faulty, err := azure.New(t.Context(), container, prefix)
			if err != nil {
				t.Fatal(err)
			}
			return faulty, clean
		})
	})
}
