package gcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"golang.org/x/oauth2"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/internal/cloudio"
	"github.com/lakelog/lakelog/objstore/internal/keyspace"
)

func init() {
	objstore.Register("gs", func(ctx context.Context, u *url.URL, opts objstore.Options) (objstore.Store, error) {
		if u.Host == "" {
			return nil, fmt.Errorf("gcs: URI %q names no bucket; want gs://bucket/prefix", u.Redacted())
		}
		if err := opts.Check("gcs", StorageOptions...); err != nil {
			return nil, err
		}
		var client []option.ClientOption
		if host, ok := opts.Lookup("STORAGE_EMULATOR_HOST"); ok {
			client = append(client, option.WithEndpoint(emulatorURL(host)+"/storage/v1/"), option.WithoutAuthentication())
		}
		if path, ok := opts.Lookup("GOOGLE_APPLICATION_CREDENTIALS"); ok {
			client = append(client, option.WithCredentialsFile(path))
		}
		return New(ctx, u.Host, u.Path, WithClientOptions(client...), func(o *options) { o.settings = opts })
	})
}

// StorageOptions are the keys of objstore.Options a gs:// store reads
// (instead of the same names in the environment).
var StorageOptions = []string{"GOOGLE_APPLICATION_CREDENTIALS", "STORAGE_EMULATOR_HOST"}

// emulatorURL is an emulator host ("127.0.0.1:4443" or a URL) as a URL.
func emulatorURL(host string) string {
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	return strings.TrimSuffix(host, "/")
}

// maxOneShot is the largest body whose size is known that a plain Put
// buffers and sends in one retryable request; the client's default chunk
// size.
const maxOneShot = 16 << 20

// Store is an objstore.Store over one Google Cloud Storage bucket, rooted
// at a prefix. It is safe for concurrent use.
type Store struct {
	client     *storage.Client
	ownsClient bool
	bucket     *storage.BucketHandle
	name       string
	root       keyspace.Root
	policy     objstore.RetryPolicy
	retry      cloudio.Retry
	batch      *batcher // JSON API batches; nil over a caller's client
	signing    *signingKey
	settings   objstore.Options
}

var (
	_ objstore.Store        = (*Store)(nil)
	_ objstore.BatchDeleter = (*Store)(nil)
	_ objstore.RangeReader  = (*Store)(nil)
)

// Location implements [objstore.Locator]: gs://bucket/prefix.
func (s *Store) Location() string {
	return s.root.Location("gs", s.name)
}

// Option configures New.
type Option func(*options)

type options struct {
	client     *storage.Client
	clientOpts []option.ClientOption
	settings   objstore.Options // storage options given to objstore.OpenWith
	policy     objstore.RetryPolicy
	signing    *signingKey
}

// WithClient makes the store use client, which the caller closes. Client
// options are then ignored.
func WithClient(client *storage.Client) Option { return func(o *options) { o.client = client } }

// WithClientOptions passes options (credentials, endpoint, HTTP client...)
// to storage.NewClient.
func WithClientOptions(opts ...option.ClientOption) Option {
	return func(o *options) { o.clientOpts = append(o.clientOpts, opts...) }
}

// WithRetryPolicy tunes retries, backoff, the read deadline and stall
// detection (see [objstore.RetryPolicy]). The client's own retries follow
// it only for a client New makes.
func WithRetryPolicy(p objstore.RetryPolicy) Option { return func(o *options) { o.policy = p } }

// New returns the store over bucket rooted at prefix ("" for the whole
// bucket; leading and trailing '/' are ignored). Unless WithClient is
// given, it makes a client with storage.NewClient, which finds credentials
// the standard way (GOOGLE_APPLICATION_CREDENTIALS, gcloud's application
// default credentials, the metadata server) and, when
// STORAGE_EMULATOR_HOST is set (fake-gcs-server: 127.0.0.1:4443), talks
// to that emulator over HTTP without credentials.
//
// New sends no request; a missing bucket shows on first use.
func New(ctx context.Context, bucket, prefix string, opts ...Option) (*Store, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if bucket == "" {
		return nil, errors.New("gcs: empty bucket name")
	}
	client, owns := o.client, false
	var batch *batcher
	if client == nil {
		batch = newBatcher(ctx, o.settings, o.clientOpts)
		var err error
		if client, err = storage.NewClient(ctx, o.clientOpts...); err != nil {
			return nil, fmt.Errorf("gcs: new client: %w", err)
		}
		owns = true
		// The client retries 408, 429, 5xx, resets and unexpected EOFs,
		// reopening a broken-off read at the byte it reached; here with
		// the policy's tries and backoff.
		p := o.policy.WithDefaults()
		client.SetRetry(storage.WithMaxAttempts(p.Attempts),
			storage.WithBackoff(gax.Backoff{Initial: p.BaseDelay, Max: p.MaxDelay, Multiplier: 2}))
	}
	return &Store{client: client, ownsClient: owns, bucket: client.Bucket(bucket), name: bucket, root: keyspace.New(prefix),
		policy: o.policy.WithDefaults(), retry: cloudio.RetryOf(o.policy), batch: batch, signing: o.signing, settings: o.settings}, nil
}

// Close releases the client New made. It is optional: a store that is
// dropped without Close leaks only idle connections.
func (s *Store) Close() error {
	if !s.ownsClient {
		return nil
	}
	return s.client.Close()
}

// Client returns the client the store sends requests with.
func (s *Store) Client() *storage.Client { return s.client }

// Bucket returns the store's bucket name.
func (s *Store) Bucket() string { return s.name }

// object returns the handle of key, after checking the key.
func (s *Store) object(op objstore.Op, key string) (*storage.ObjectHandle, error) {
	name, err := s.root.Name(key)
	if err != nil {
		return nil, fmt.Errorf("gcs: %s: %w", op, err)
	}
	return s.bucket.Object(name), nil
}

// Get implements objstore.Store.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	obj, err := s.object(objstore.OpGet, key)
	if err != nil {
		return nil, err
	}
	var b []byte
	err = s.retry.Do(ctx, func(ctx context.Context) error {
		gctx, guard := cloudio.NewGuard(ctx, s.policy.StallTimeout, "gs://"+s.name+"/"+key)
		defer guard.Stop()
		r, err := obj.ReadCompressed(true).NewReader(gctx)
		if err != nil {
			return s.fail(objstore.OpGet, key, guard.Err(err))
		}
		defer r.Close()
		guard.Kick()
		if b, err = cloudio.ReadBody(guard.Reader(r), r.Attrs.Size); err == nil && r.Attrs.ContentEncoding == "" {
			err = cloudio.CheckLength(b, r.Attrs.Size)
		}
		if err != nil {
			return s.fail(objstore.OpGet, key, guard.Err(err))
		}
		return nil
	})
	return b, err
}

// GetRange implements objstore.Store with a ranged read. An empty range
// and a range starting at or past the end cost one metadata read more.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	b := []byte{}
	_, err := s.getRange(ctx, key, off, n, func(r io.Reader, want int64) (int, error) {
		var err error
		b, err = cloudio.ReadBody(r, want)
		return len(b), err
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// GetRangeInto implements objstore.RangeReader: GetRange into p.
func (s *Store) GetRangeInto(ctx context.Context, key string, off int64, p []byte) (int, error) {
	return s.getRange(ctx, key, off, int64(len(p)), func(r io.Reader, want int64) (int, error) {
		got, err := io.ReadFull(r, p[:min(want, int64(len(p)))])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = nil // checked against the object's size by getRange
		}
		return got, err
	})
}

// getRange opens a range reader of n bytes at off and hands it, with the
// bytes it should yield, to read, which returns the count it kept; the
// whole read is retried when it fails transiently, and the count is
// checked: exactly the bytes asked for, or up to the object's end.
func (s *Store) getRange(ctx context.Context, key string, off, n int64, read func(r io.Reader, want int64) (int, error)) (int, error) {
	if off < 0 || n < 0 {
		return 0, fmt.Errorf("gcs: getrange %q: negative offset %d or length %d", key, off, n)
	}
	obj, err := s.object(objstore.OpGetRange, key)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return cloudio.EndRange(ctx, "gcs", key, off, 0, 0, true, s.sizeOf(key))
	}
	got := 0
	empty := false
	err = s.retry.Do(ctx, func(ctx context.Context) error {
		gctx, guard := cloudio.NewGuard(ctx, s.policy.StallTimeout, "gs://"+s.name+"/"+key)
		defer guard.Stop()
		r, err := obj.ReadCompressed(true).NewRangeReader(gctx, off, n)
		if err != nil {
			if status(err) == http.StatusRequestedRangeNotSatisfiable {
				empty = true
				return nil
			}
			return s.fail(objstore.OpGetRange, key, guard.Err(err))
		}
		defer r.Close()
		guard.Kick()
		if got, err = read(io.LimitReader(guard.Reader(r), n), min(n, r.Remain())); err != nil {
			return s.fail(objstore.OpGetRange, key, guard.Err(err))
		}
		// Exactly the bytes asked for, or up to the object's end.
		if r.Attrs.StartOffset != off || int64(got) != min(n, r.Attrs.Size-off) && r.Attrs.ContentEncoding == "" {
			return fmt.Errorf("gcs: getrange %q: %w", key, &cloudio.ShortReadError{Off: off, N: n, Got: int64(got), Start: r.Attrs.StartOffset, End: -1, Total: r.Attrs.Size})
		}
		return nil
	})
	if err == nil && empty {
		return cloudio.EndRange(ctx, "gcs", key, off, n, 0, true, s.sizeOf(key))
	}
	return got, err
}

// sizeOf asks the size of key, for EndRange.
func (s *Store) sizeOf(key string) func(context.Context) (int64, error) {
	return func(ctx context.Context) (int64, error) {
		info, err := s.head(ctx, objstore.OpGetRange, key)
		return info.Size, err
	}
}

// Head implements objstore.Store.
func (s *Store) Head(ctx context.Context, key string) (objstore.ObjectInfo, error) {
	return s.head(ctx, objstore.OpHead, key)
}

func (s *Store) head(ctx context.Context, op objstore.Op, key string) (objstore.ObjectInfo, error) {
	obj, err := s.object(op, key)
	if err != nil {
		return objstore.ObjectInfo{}, err
	}
	attrs, err := obj.Attrs(ctx)
	if err != nil {
		return objstore.ObjectInfo{}, s.fail(op, key, err)
	}
	return objstore.ObjectInfo{Key: key, Size: attrs.Size, ModTime: attrs.Updated}, nil
}

// Put implements objstore.Store.
//
// With IfAbsent the body is read into memory and then uploaded with the
// precondition ifGenerationMatch=0 (Conditions{DoesNotExist: true}) in one
// request, which is never retried (see the package documentation); a 412
// is objstore.ErrExists.
//
// Otherwise a body of known size up to 16 MiB is buffered and sent in one
// request, and a longer or unsized one in a resumable upload of 16 MiB
// chunks; both are retried on transient errors, since an overwrite may be
// repeated. GCS publishes an object only when its upload completes; a body
// that fails cancels the upload.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, opts objstore.PutOptions) error {
	obj, err := s.object(objstore.OpPut, key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("gcs: put %q: %w", key, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var w *storage.Writer
	if opts.IfAbsent {
		// Read the body first: a body that fails must not start an upload,
		// and a commit is small.
		data, err := cloudio.ReadBody(body, opts.Size)
		if err != nil {
			return fmt.Errorf("gcs: put %q: read body: %w", key, err)
		}
		body = bytes.NewReader(data)
		w = obj.If(storage.Conditions{DoesNotExist: true}).
			Retryer(storage.WithPolicy(storage.RetryNever)).
			NewWriter(wctx)
		w.ChunkSize = 0 // one request, streamed from memory
	} else {
		w = obj.Retryer(storage.WithPolicy(storage.RetryAlways)).NewWriter(wctx)
		if opts.Size > 0 && opts.Size <= maxOneShot {
			w.ChunkSize = int(opts.Size) + 1 // one chunk; the client rounds it up to 256 KiB
		}
		// Each chunk of a resumable upload is kept until GCS acknowledges
		// it and re-sent alone on a transient failure; a try that takes
		// longer than the stall timeout plus a second per MiB of the
		// chunk is cut and re-sent.
		w.ChunkTransferTimeout = s.policy.StallTimeout + time.Duration(max(w.ChunkSize, 1<<20)>>20)*time.Second
	}
	src := &objstore.BodyReader{R: body}
	_, copyErr := io.Copy(w, src)
	if src.Err != nil {
		// Abandon the upload. Close would end the body normally and so
		// publish what was written; cancelling makes the writer abort it.
		cancel()
		if ctx.Err() != nil {
			return fmt.Errorf("gcs: put %q: %w", key, ctx.Err())
		}
		return fmt.Errorf("gcs: put %q: read body: %w", key, src.Err)
	}
	err = w.Close() // after a failed Write, Close reports the upload's error
	if err == nil && copyErr != nil {
		err = copyErr
	}
	if err != nil {
		if opts.IfAbsent && status(err) == http.StatusPreconditionFailed {
			return fmt.Errorf("gcs: put %q: %w", key, objstore.ErrExists)
		}
		return s.fail(objstore.OpPut, key, err)
	}
	return nil
}

// Delete implements objstore.Store. Deleting a missing key succeeds.
func (s *Store) Delete(ctx context.Context, key string) error {
	obj, err := s.object(objstore.OpDelete, key)
	if err != nil {
		return err
	}
	if err := obj.Retryer(storage.WithPolicy(storage.RetryAlways)).Delete(ctx); err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
		return s.fail(objstore.OpDelete, key, err)
	}
	return nil
}

// List implements objstore.Store. GCS lists names in the byte order of
// their UTF-8 encoding; StartOffset, which is inclusive, skips on the server
// to startAfter itself, which is then dropped here.
func (s *Store) List(ctx context.Context, prefix, startAfter string) iter.Seq2[objstore.ObjectInfo, error] {
	return func(yield func(objstore.ObjectInfo, error) bool) {
		q := &storage.Query{Prefix: s.root.ListPrefix(prefix)}
		if startAfter != "" {
			q.StartOffset = s.root.ListPrefix(startAfter)
		}
		if err := q.SetAttrSelection([]string{"Name", "Size", "Updated"}); err != nil {
			yield(objstore.ObjectInfo{}, fmt.Errorf("gcs: list %q: %w", prefix, err))
			return
		}
		it := s.bucket.Objects(ctx, q)
		for {
			attrs, err := it.Next()
			if err == iterator.Done {
				return
			}
			if err != nil {
				yield(objstore.ObjectInfo{}, s.fail(objstore.OpList, prefix, err))
				return
			}
			key, ok := s.root.Key(attrs.Name)
			if !ok || !strings.HasPrefix(key, prefix) || key <= startAfter {
				continue // startAfter itself, or a server that ignores the query
			}
			if !yield(objstore.ObjectInfo{Key: key, Size: attrs.Size, ModTime: attrs.Updated}, nil) {
				return
			}
		}
	}
}

// fail wraps a client error of op on key, mapping a missing object to
// objstore.ErrNotFound.
func (s *Store) fail(op objstore.Op, key string, err error) error {
	code := status(err)
	var re *oauth2.RetrieveError
	switch {
	case errors.Is(err, storage.ErrObjectNotExist) && op != objstore.OpList:
		return fmt.Errorf("gcs: %s %q: %w", op, key, objstore.ErrNotFound)
	case errors.Is(err, storage.ErrBucketNotExist) || (code == 404 && (op == objstore.OpPut || op == objstore.OpList)):
		// A write or a listing answered 404: the bucket is missing.
		return fmt.Errorf("gcs: %s %q: bucket %q: %w: %w", op, key, s.name, objstore.ErrNoBucket, err)
	case code == 401 || code == 403 || errors.As(err, &re):
		return fmt.Errorf("gcs: %s %q in bucket %q: %w: %w", op, key, s.name, objstore.ErrAccessDenied, err)
	case code == 400 || code == 405 || code == 411 || code == 413:
		return fmt.Errorf("gcs: %s %q in bucket %q: %w: %w", op, key, s.name, objstore.ErrRefused, err)
	}
	return fmt.Errorf("gcs: %s %q in bucket %q: %w", op, key, s.name, err)
}

// status is the HTTP status of an API error, or 0.
func status(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}
