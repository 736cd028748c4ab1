package azure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/objstore/objstoretest"
)

// connectionString returns the test emulator's connection string, or ends
// the test.
func connectionString(t *testing.T) string {
	t.Helper()
	return cloudtest.Require(t, "AZURE_STORAGE_CONNECTION_STRING", "Azurite")
}

// connectionEndpoint is the base URL of the Azurite that
// AZURE_STORAGE_CONNECTION_STRING names, without the account.
func connectionEndpoint(t *testing.T) string {
	cs := connectionString(t)
	upstream := "http://127.0.0.1:10000"
	if i := strings.Index(cs, "BlobEndpoint="); i >= 0 {
		ep, _, _ := strings.Cut(cs[i+len("BlobEndpoint="):], ";")
		upstream = ep[:strings.LastIndex(strings.TrimRight(ep, "/"), "/")]
	}
	return upstream
}

// newContainer creates a fresh container on the test's Azurite, which is
// deleted when the test ends: Azurite slows down as its store grows.
func newContainer(t *testing.T) string {
	t.Helper()
	connectionString(t)
	name := cloudtest.Name("lakelog-")
	s, err := New(t.Context(), name, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Container().Create(t.Context(), nil); err != nil {
		t.Fatalf("create container %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := s.Container().Delete(ctx, nil); err != nil {
			t.Logf("delete container %s: %v", name, err)
		}
	})
	return name
}

func TestConformance(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := New(t.Context(), newContainer(t), cloudtest.Name("run-"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestConformanceContainerRoot runs the suite on stores that own a whole
// container, with no prefix.
func TestConformanceContainerRoot(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := New(t.Context(), newContainer(t), "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, objstoretest.WithRaceRounds(20))
}

// isConditionalPut reports whether r is a Put Blob with If-None-Match: *.
func isConditionalPut(r *http.Request) bool {
	return r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*"
}

// TestLostResponse: a conditional Put Blob whose response is lost
// (cloudtest.CheckLostResponse).
func TestLostResponse(t *testing.T) {
	upstream := connectionEndpoint(t)
	name := newContainer(t)
	cloudtest.CheckLostResponse(t, isConditionalPut, func(t *testing.T, intercept cloudtest.Interceptor) objstore.Store {
		proxy := cloudtest.NewProxy(t, upstream, intercept)
		t.Setenv("AZURE_STORAGE_CONNECTION_STRING", fmt.Sprintf(
			"DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=%s/%s;",
			emulatorAccount, emulatorKey, proxy.URL, emulatorAccount))
		s, err := New(t.Context(), name, cloudtest.Name("lost-"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestStagedUpload puts bodies over the block size, of known and unknown
// size, as staged blocks.
func TestStagedUpload(t *testing.T) {
	s, err := New(t.Context(), newContainer(t), "staged", WithBlockSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	body := make([]byte, 2<<20+12345)
	for i := range body {
		body[i] = byte(i * 11)
	}
	for _, tc := range []struct {
		name string
		size int64
		body []byte
	}{
		{"KnownSize", int64(len(body)), body},
		{"UnknownSize", 0, body},
		{"ExactlyOneBlock", 0, body[:1<<20]},
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

	// A body that fails after two blocks leaves no blob behind.
	failing := io.MultiReader(bytes.NewReader(body), errReader{})
	if err := s.Put(ctx, "failed", failing, objstore.PutOptions{}); err == nil {
		t.Fatal("Put with a body that fails after two blocks succeeded")
	}
	if _, err := s.Head(ctx, "failed"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Head after the failed staged Put = %v, want ErrNotFound", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("body broke") }

// TestEnvironment checks the ways New finds the account.
func TestEnvironment(t *testing.T) {
	connectionString(t)
	name := newContainer(t)
	put := func(t *testing.T) {
		t.Helper()
		s, err := New(t.Context(), name, cloudtest.Name("env-"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(t.Context(), "k", strings.NewReader("v"), objstore.PutOptions{IfAbsent: true}); err != nil {
			t.Fatal(err)
		}
	}
	clear := func(t *testing.T) {
		for _, k := range []string{"AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_USE_EMULATOR",
			"AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_ACCOUNT_KEY",
			"AZURE_STORAGE_ACCESS_KEY", "AZURE_STORAGE_MASTER_KEY", "AZURE_STORAGE_SAS_TOKEN",
			"AZURE_STORAGE_SAS_KEY", "AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT", "AZURITE_BLOB_STORAGE_URL"} {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Run("Emulator", func(t *testing.T) {
		clear(t)
		t.Setenv("AZURE_STORAGE_USE_EMULATOR", "true")
		put(t)
	})
	t.Run("AccountKeyEndpoint", func(t *testing.T) {
		clear(t)
		t.Setenv("AZURE_STORAGE_ACCOUNT_NAME", emulatorAccount)
		t.Setenv("AZURE_STORAGE_ACCOUNT_KEY", emulatorKey)
		t.Setenv("AZURE_STORAGE_ENDPOINT", "http://127.0.0.1:10000/"+emulatorAccount)
		put(t)
	})
	t.Run("NoAccount", func(t *testing.T) {
		clear(t)
		if _, err := New(t.Context(), name, ""); err == nil {
			t.Fatal("New with no account in the environment succeeded")
		}
	})
	t.Run("AccountWithoutKey", func(t *testing.T) {
		clear(t)
		t.Setenv("AZURE_STORAGE_ACCOUNT_NAME", "someaccount")
		if _, err := New(t.Context(), name, ""); err == nil {
			t.Fatal("New with an account but no key succeeded")
		}
	})
}

// TestOpenURI opens the store by URI, as the command line does.
func TestOpenURI(t *testing.T) {
	name := newContainer(t)
	ctx := t.Context()
	s, err := objstore.Open(ctx, fmt.Sprintf("az://%s/tables/t1/", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "x.json", strings.NewReader("x"), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	whole, err := New(ctx, name, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := whole.Get(ctx, "tables/t1/x.json"); err != nil || string(got) != "x" {
		t.Fatalf("Get(tables/t1/x.json) from the container root = %q, %v", got, err)
	}
	if _, err := objstore.Open(ctx, "az:///nocontainer"); err == nil {
		t.Error("Open(az:///nocontainer) succeeded")
	}
}

// TestMissingContainer checks that a missing container is not reported as
// a missing key.
func TestMissingContainer(t *testing.T) {
	connectionString(t)
	s, err := New(t.Context(), cloudtest.Name("missing-"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), "k"); err == nil || errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Get from a missing container = %v, want an error that is not ErrNotFound", err)
	}
	for _, err := range s.List(t.Context(), "", "") {
		if err == nil || errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("List of a missing container yielded %v, want an error that is not ErrNotFound", err)
		}
	}
}

func TestOrderSafePrefix(t *testing.T) {
	for in, want := range map[string]string{
		"":             "",
		"a/b":          "a/b",
		"\xff":         "",
		"a/\xffb":      "a/",
		"é\xc3":        "é",
		"ok\uFFFDnot":  "ok",
		"日本/語\xe6\x97": "日本/語",
		"a\uE000b":     "a",
		"a\uD7FFb":     "a\uD7FFb",
		"a😀b":          "a",
	} {
		if got := orderSafePrefix(in); got != want {
			t.Errorf("orderSafePrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestListUTF16Order lists names that UTF-16 order (Azurite's) and byte
// order (the contract's) sort differently.
func TestListUTF16Order(t *testing.T) {
	s, err := New(t.Context(), newContainer(t), "order")
	if err != nil {
		t.Fatal(err)
	}
	cloudtest.CheckListOrder(t, s)
}
