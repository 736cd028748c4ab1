package s3

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/internal/cloudio"
	"github.com/lakelog/lakelog/objstore/internal/keyspace"
)

func init() {
	objstore.Register("s3", func(ctx context.Context, u *url.URL, opts objstore.Options) (objstore.Store, error) {
		if u.Host == "" {
			return nil, fmt.Errorf("s3: URI %q names no bucket; want s3://bucket/prefix", u.Redacted())
		}
		so, err := storageOptions(opts)
		if err != nil {
			return nil, err
		}
		return New(ctx, u.Host, u.Path, so...)
	})
}

// StorageOptions are the keys of objstore.Options an s3:// store reads;
// without them the SDK reads the same names from the environment (and
// its shared files).
var StorageOptions = []string{"AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID",
	"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "AWS_ALLOW_HTTP"}

// storageOptions are the options opts gives.
func storageOptions(opts objstore.Options) ([]Option, error) {
	if err := opts.Check("s3", StorageOptions...); err != nil {
		return nil, err
	}
	var out []Option
	if v, ok := opts.Lookup("AWS_ENDPOINT_URL"); ok {
		out = append(out, WithEndpoint(v))
	}
	for _, k := range []string{"AWS_DEFAULT_REGION", "AWS_REGION"} {
		if v, ok := opts.Lookup(k); ok {
			out = append(out, WithRegion(v))
		}
	}
	id, hasID := opts.Lookup("AWS_ACCESS_KEY_ID")
	secret, hasSecret := opts.Lookup("AWS_SECRET_ACCESS_KEY")
	if hasID != hasSecret {
		return nil, errors.New("s3: storage options give AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY together or neither")
	}
	if hasID {
		token, _ := opts.Lookup("AWS_SESSION_TOKEN")
		out = append(out, WithCredentials(credentials.NewStaticCredentialsProvider(id, secret, token)))
	}
	if v, ok := opts.Lookup("AWS_VIRTUAL_HOSTED_STYLE_REQUEST"); ok {
		virtual, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("s3: storage option AWS_VIRTUAL_HOSTED_STYLE_REQUEST=%q is not true or false", v)
		}
		out = append(out, WithPathStyle(!virtual))
	}
	return out, nil
}

const (
	// DefaultPartSize is the size of the parts of a multipart upload, and
	// the largest body a plain Put sends in one request.
	DefaultPartSize = 8 << 20
	// MinPartSize is S3's smallest part but the last.
	MinPartSize = 5 << 20
	// maxParts is S3's limit on the parts of one multipart upload.
	maxParts = 10000
	// DefaultPartConcurrency is how many parts of one multipart upload
	// are sent at once, while the body's next part is being read.
	DefaultPartConcurrency = 4
	// conflictAttempts bounds the tries of a conditional put that S3
	// answers with 409 ConditionalRequestConflict.
	conflictAttempts = 8
)

// Store is an objstore.Store over one S3 bucket, rooted at a prefix.
// It is safe for concurrent use.
type Store struct {
	client   *s3sdk.Client
	bucket   string
	root     keyspace.Root
	partSize int64
	// partConc is how many parts of one upload are in flight at once.
	partConc int
	// retry re-issues reads whose body fails after the SDK returned.
	retry cloudio.Retry
	// parts holds part buffers of partSize bytes between uploads.
	parts sync.Pool
}

var (
	_ objstore.Store        = (*Store)(nil)
	_ objstore.BatchDeleter = (*Store)(nil)
	_ objstore.RangeReader  = (*Store)(nil)
)

// Location implements [objstore.Locator]: s3://bucket/prefix.
func (s *Store) Location() string {
	return s.root.Location("s3", s.bucket)
}

// Option configures New.
type Option func(*options)

type options struct {
	client     *s3sdk.Client
	endpoint   string
	region     string
	pathStyle  *bool
	creds      aws.CredentialsProvider
	httpClient aws.HTTPClient
	partSize   int64
	partConc   int
	policy     objstore.RetryPolicy
}

// WithClient makes the store use client as it is. The options that build a
// client (endpoint, region, path style, credentials, HTTP client) are then
// ignored.
func WithClient(client *s3sdk.Client) Option { return func(o *options) { o.client = client } }

// WithEndpoint sets the S3 endpoint URL, as AWS_ENDPOINT_URL_S3 does.
// Addressing is then path-style unless WithPathStyle(false) is given.
func WithEndpoint(url string) Option { return func(o *options) { o.endpoint = url } }

// WithRegion sets the region, overriding AWS_REGION and the shared config.
func WithRegion(region string) Option { return func(o *options) { o.region = region } }

// WithPathStyle chooses path-style (true: http://host/bucket/key) or
// virtual-hosted-style (false: http://bucket.host/key) addressing,
// overriding the choice New makes from the endpoint and environment.
func WithPathStyle(pathStyle bool) Option { return func(o *options) { o.pathStyle = &pathStyle } }

// WithCredentials sets the credentials provider, overriding the default
// chain (environment, shared files, SSO, container and instance roles).
func WithCredentials(p aws.CredentialsProvider) Option { return func(o *options) { o.creds = p } }

// WithHTTPClient sets the HTTP client the SDK sends requests with.
func WithHTTPClient(c aws.HTTPClient) Option { return func(o *options) { o.httpClient = c } }

// WithPartSize sets the part size of multipart uploads, at least
// MinPartSize. Bodies up to this size are sent in one request.
func WithPartSize(n int64) Option { return func(o *options) { o.partSize = n } }

// WithPartConcurrency sets how many parts of one multipart upload are
// sent at once (at least 1; DefaultPartConcurrency unless set). An upload
// holds at most this many part buffers: n × the part size of memory.
func WithPartConcurrency(n int) Option { return func(o *options) { o.partConc = n } }

// WithRetryPolicy tunes retries, backoff, the read deadline and stall
// detection (see [objstore.RetryPolicy]). It applies to the client New
// makes; with WithClient only the retry of broken-off reads follows it.
func WithRetryPolicy(p objstore.RetryPolicy) Option { return func(o *options) { o.policy = p } }

// New returns the store over bucket rooted at prefix ("" for the whole
// bucket; leading and trailing '/' are ignored). Unless WithClient is given
// it loads the AWS configuration the way the AWS CLI does
// (config.LoadDefaultConfig), with these additions:
//
//   - AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (or endpoint_url in the shared
//     config, or WithEndpoint) selects a custom endpoint such as MinIO. With a
//     custom endpoint addressing is path-style, unless
//     AWS_VIRTUAL_HOSTED_STYLE_REQUEST=true, as in delta-rs.
//   - The region defaults to us-east-1 when none is configured.
//   - When static keys are given (AWS_ACCESS_KEY_ID and
//     AWS_SECRET_ACCESS_KEY, or WithCredentials), the EC2 instance metadata
//     service is never asked for anything.
//
// New sends no request; a missing bucket shows on first use.
func New(ctx context.Context, bucket, prefix string, opts ...Option) (*Store, error) {
	o := options{partSize: DefaultPartSize, partConc: DefaultPartConcurrency}
	for _, opt := range opts {
		opt(&o)
	}
	if bucket == "" {
		return nil, errors.New("s3: empty bucket name")
	}
	if o.partSize < MinPartSize {
		return nil, fmt.Errorf("s3: part size %d is below S3's minimum %d", o.partSize, MinPartSize)
	}
	if o.partConc < 1 {
		return nil, fmt.Errorf("s3: part concurrency %d is not positive", o.partConc)
	}
	client := o.client
	if client == nil {
		var err error
		if client, err = newClient(ctx, o); err != nil {
			return nil, err
		}
	}
	return &Store{client: client, bucket: bucket, root: keyspace.New(prefix), partSize: o.partSize,
		partConc: o.partConc, retry: cloudio.RetryOf(o.policy)}, nil
}

func newClient(ctx context.Context, o options) (*s3sdk.Client, error) {
	var load []func(*config.LoadOptions) error
	if o.region != "" {
		load = append(load, config.WithRegion(o.region))
	}
	if o.creds != nil {
		load = append(load, config.WithCredentialsProvider(o.creds))
	}
	if o.httpClient != nil {
		load = append(load, config.WithHTTPClient(o.httpClient))
	}
	policy := o.policy.WithDefaults()
	load = append(load, config.WithRetryer(func() aws.Retryer { return newRetryer(policy) }))
	if o.creds != nil || (os.Getenv("AWS_ACCESS_KEY_ID") != "" && os.Getenv("AWS_SECRET_ACCESS_KEY") != "") {
		load = append(load, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("s3: load AWS config: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Credentials != nil && !aws.IsCredentialsProvider(cfg.Credentials, aws.AnonymousCredentials{}) {
		cfg.Credentials = markedCredentials{cfg.Credentials}
	}
	// Every request, each try of it, goes through the stall watchdog.
	cfg.HTTPClient = cloudio.WatchClient(cfg.HTTPClient, policy.StallTimeout)
	virtualHosted, _ := strconv.ParseBool(os.Getenv("AWS_VIRTUAL_HOSTED_STYLE_REQUEST"))
	return s3sdk.NewFromConfig(cfg, func(so *s3sdk.Options) {
		if o.endpoint != "" {
			so.BaseEndpoint = aws.String(o.endpoint)
		}
		switch {
		case o.pathStyle != nil:
			so.UsePathStyle = *o.pathStyle
		case so.BaseEndpoint != nil:
			// A custom endpoint (MinIO, Ceph, R2...) seldom has wildcard
			// DNS for bucket subdomains.
			so.UsePathStyle = !virtualHosted
		}
		// Ranged GETs and servers such as MinIO return no whole-object
		// checksum to validate; that is expected, not worth a log line per
		// request.
		so.DisableLogOutputChecksumValidationSkipped = true
	}), nil
}

// newRetryer is the SDK's standard retryer as p asks: p.Attempts tries,
// full-jitter backoff between p.BaseDelay and p.MaxDelay, retrying what the
// standard retryer does (5xx, 429, SlowDown and other throttling, broken
// connections, timeouts, hence stalls) and also a response body that
// broke off (unexpected EOF) while the SDK read it. The client-side retry
// quota is off: under a burst of faults it would fail requests that one
// more try would complete.
func newRetryer(p objstore.RetryPolicy) aws.Retryer {
	r := cloudio.Retry{Base: p.BaseDelay, Max: p.MaxDelay}
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = p.Attempts
		o.MaxBackoff = p.MaxDelay
		o.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
			return r.Backoff(attempt), nil
		})
		o.RateLimiter = ratelimit.None
		o.Retryables = append(slices.Clone(o.Retryables), retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, cloudio.ErrStalled) {
				return aws.TrueTernary
			}
			return aws.UnknownTernary
		}))
	})
}

// Client returns the SDK client the store sends requests with.
func (s *Store) Client() *s3sdk.Client { return s.client }

// Bucket returns the store's bucket.
func (s *Store) Bucket() string { return s.bucket }

// Get implements objstore.Store.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	name, err := s.root.Name(key)
	if err != nil {
		return nil, fmt.Errorf("s3: get: %w", err)
	}
	var b []byte
	err = s.retry.Do(ctx, func(ctx context.Context) error {
		out, err := s.client.GetObject(ctx, &s3sdk.GetObjectInput{Bucket: &s.bucket, Key: &name})
		if err != nil {
			return s.fail(objstore.OpGet, key, err)
		}
		defer out.Body.Close()
		size := int64(-1)
		if out.ContentLength != nil {
			size = *out.ContentLength
		}
		if b, err = cloudio.ReadBody(out.Body, size); err == nil {
			err = cloudio.CheckLength(b, size)
		}
		if err != nil {
			return fmt.Errorf("s3: get %q: %w", key, err)
		}
		return nil
	})
	return b, err
}

// GetRange implements objstore.Store with a ranged GET. An empty range and
// a range starting at or past the end cost one HEAD more.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	b := []byte{}
	if _, err := s.getRange(ctx, key, off, n, cloudio.ReadRangeNew(&b, off, n)); err != nil {
		return nil, err
	}
	return b, nil
}

// GetRangeInto implements objstore.RangeReader: GetRange into p.
func (s *Store) GetRangeInto(ctx context.Context, key string, off int64, p []byte) (int, error) {
	return s.getRange(ctx, key, off, int64(len(p)), cloudio.ReadRangeTo(off, p))
}

// getRange sends a ranged GET of n bytes at off and hands its body, with
// its Content-Length and Content-Range, to read, which returns the count
// of bytes it kept; the whole request is retried when reading fails
// transiently. A range that yields no byte (empty, at or past the end)
// is answered after a HEAD: 0 at the end, an error past it or, before
// it, a short read.
func (s *Store) getRange(ctx context.Context, key string, off, n int64, read cloudio.RangeRead) (int, error) {
	if off < 0 || n < 0 {
		return 0, fmt.Errorf("s3: getrange %q: negative offset %d or length %d", key, off, n)
	}
	name, err := s.root.Name(key)
	if err != nil {
		return 0, fmt.Errorf("s3: getrange: %w", err)
	}
	if n == 0 {
		return cloudio.EndRange(ctx, "s3", key, off, 0, 0, true, s.sizeOf(key))
	}
	got := 0
	empty := false
	err = s.retry.Do(ctx, func(ctx context.Context) error {
		out, err := s.client.GetObject(ctx, &s3sdk.GetObjectInput{
			Bucket: &s.bucket,
			Key:    &name,
			Range:  aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1)),
		})
		if err != nil {
			if statusCode(err) == 416 { // the range starts at or past the end
				empty = true
				return nil
			}
			return s.fail(objstore.OpGetRange, key, err)
		}
		defer out.Body.Close()
		if got, err = read(out.Body, aws.ToInt64(out.ContentLength), aws.ToString(out.ContentRange)); err != nil {
			return fmt.Errorf("s3: getrange %q: %w", key, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	// Some servers answer a range at the end with no bytes rather than
	// 416; before the end it is a short read.
	return cloudio.EndRange(ctx, "s3", key, off, n, got, empty, s.sizeOf(key))
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
	name, err := s.root.Name(key)
	if err != nil {
		return objstore.ObjectInfo{}, fmt.Errorf("s3: %s: %w", op, err)
	}
	out, err := s.client.HeadObject(ctx, &s3sdk.HeadObjectInput{Bucket: &s.bucket, Key: &name})
	if err != nil {
		return objstore.ObjectInfo{}, s.fail(op, key, err)
	}
	return objstore.ObjectInfo{
		Key:     key,
		Size:    aws.ToInt64(out.ContentLength),
		ModTime: aws.ToTime(out.LastModified),
	}, nil
}

// Put implements objstore.Store.
//
// With IfAbsent the body is read into memory and sent in one PutObject with
// If-None-Match: *, and exactly one request reaches S3 per attempt: the
// SDK's automatic retries are off for it (see the package documentation).
// A 409 ConditionalRequestConflict, which S3 sends when another conditional
// write to the key is in flight and which means nothing was written, is
// retried a few times with jittered backoff.
//
// Otherwise a body up to the part size goes in one PutObject and a longer
// one, or one of unknown size, in a multipart upload, which S3 publishes
// whole on completion and which is aborted on failure.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, opts objstore.PutOptions) error {
	name, err := s.root.Name(key)
	if err != nil {
		return fmt.Errorf("s3: put: %w", err)
	}
	if opts.IfAbsent {
		data, err := cloudio.ReadBody(body, opts.Size)
		if err != nil {
			return fmt.Errorf("s3: put %q: read body: %w", key, err)
		}
		return s.putIfAbsent(ctx, key, name, data)
	}
	first, err := cloudio.ReadBody(io.LimitReader(body, s.partSize), min(opts.Size, s.partSize))
	if err != nil {
		return fmt.Errorf("s3: put %q: read body: %w", key, err)
	}
	if int64(len(first)) < s.partSize {
		_, err := s.client.PutObject(ctx, &s3sdk.PutObjectInput{
			Bucket:        &s.bucket,
			Key:           &name,
			Body:          bytes.NewReader(first),
			ContentLength: aws.Int64(int64(len(first))),
		})
		if err != nil {
			return s.fail(objstore.OpPut, key, err)
		}
		return nil
	}
	return s.putMultipart(ctx, key, name, first, body, opts.Size)
}

func (s *Store) putIfAbsent(ctx context.Context, key, name string, data []byte) error {
	backoff := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		_, err := s.client.PutObject(ctx, &s3sdk.PutObjectInput{
			Bucket:        &s.bucket,
			Key:           &name,
			Body:          bytes.NewReader(data),
			ContentLength: aws.Int64(int64(len(data))),
			IfNoneMatch:   aws.String("*"),
		}, noRetries)
		if err == nil {
			return nil
		}
		switch code := statusCode(err); {
		case code == 412:
			return fmt.Errorf("s3: put %q: %w", key, objstore.ErrExists)
		case code == 409 && errorCode(err) == "ConditionalRequestConflict" && attempt < conflictAttempts:
			// Another conditional write to the key is in flight; ours was
			// not applied. The next try will most likely see its outcome.
			t := time.NewTimer(backoff/2 + rand.N(backoff))
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("s3: put %q: %w", key, ctx.Err())
			case <-t.C:
			}
			backoff = min(2*backoff, time.Second)
		default:
			return s.fail(objstore.OpPut, key, err)
		}
	}
}

// noRetries makes one call send exactly one request.
func noRetries(o *s3sdk.Options) { o.Retryer = aws.NopRetryer{} }

// putMultipart uploads first and then the rest of body in parts, up to
// s.partConc of them in flight while the next is read from body. Each
// part is a seekable buffer the SDK's retryer re-sends on a transient
// failure (a 5xx, SlowDown, a reset, a stall), so a failed part costs that
// part, not the file. The upload holds at most s.partConc buffers of the
// part size; they return to a pool shared by the store's uploads.
func (s *Store) putMultipart(ctx context.Context, key, name string, first []byte, body io.Reader, size int64) (err error) {
	partSize := s.partSize
	if size > partSize*maxParts { // grow the parts so that a known size fits
		partSize = (size + maxParts - 1) / maxParts
	}
	checksum := s.client.Options().RequestChecksumCalculation != aws.RequestChecksumCalculationWhenRequired
	create := &s3sdk.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &name}
	if checksum {
		create.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
	}
	up, err := s.client.CreateMultipartUpload(ctx, create)
	if err != nil {
		return s.fail(objstore.OpPut, key, err)
	}
	defer func() {
		if err == nil {
			return
		}
		// Abort even when ctx is done, so the parts are not left billed.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		s.client.AbortMultipartUpload(actx, &s3sdk.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &name, UploadId: up.UploadId})
	}()

	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		parts   []types.CompletedPart
		partErr error
		slots   = make(chan struct{}, s.partConc) // one per part buffer held
		pooled  = partSize == s.partSize
		// free holds this upload's buffers between parts: reused here,
		// they make no garbage (a sync.Pool drops its buffers at each
		// collection); they go back to the store's pool at the end.
		free     [][]byte
		uploaded = func(buf []byte) {
			if cap(buf) >= int(partSize) {
				mu.Lock()
				free = append(free, buf[:cap(buf)])
				mu.Unlock()
			}
			<-slots
		}
		nextBuffer = func() []byte {
			mu.Lock()
			defer mu.Unlock()
			if k := len(free); k > 0 {
				b := free[k-1]
				free = free[:k-1]
				return b[:partSize]
			}
			return s.partBuffer(partSize, pooled)
		}
	)
	defer func() {
		if pooled {
			for _, b := range free {
				s.parts.Put(&b)
			}
		}
	}()
	send := func(num int32, part []byte) {
		defer wg.Done()
		sent := false
		defer func() {
			if sent {
				uploaded(part)
				return
			}
			// A failed attempt's body may still be read by the HTTP
			// transport after the call returns (http.RoundTripper may
			// close it later): the buffer is not reused.
			<-slots
		}()
		in := &s3sdk.UploadPartInput{
			Bucket:        &s.bucket,
			Key:           &name,
			UploadId:      up.UploadId,
			PartNumber:    aws.Int32(num),
			Body:          bytes.NewReader(part),
			ContentLength: aws.Int64(int64(len(part))),
		}
		if checksum {
			in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
		}
		out, err := s.client.UploadPart(pctx, in)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if partErr == nil {
				partErr = s.fail(objstore.OpPut, key, fmt.Errorf("part %d: %w", num, err))
				cancel(partErr)
			}
			return
		}
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(num), ETag: out.ETag, ChecksumCRC32: out.ChecksumCRC32})
		sent = true
	}
	failed := func() error {
		mu.Lock()
		defer mu.Unlock()
		return partErr
	}

	slots <- struct{}{}
	part := first
	for num := int32(1); ; num++ {
		wg.Add(1)
		go send(num, part)
		// Take a slot for the next part's buffer: wait while partConc
		// parts are in flight, or until one fails.
		select {
		case slots <- struct{}{}:
		case <-pctx.Done():
			wg.Wait()
			if err := failed(); err != nil {
				return err
			}
			return fmt.Errorf("s3: put %q: %w", key, ctx.Err())
		}
		if err := failed(); err != nil {
			<-slots
			wg.Wait()
			return err
		}
		buf := nextBuffer()
		n, rerr := io.ReadFull(body, buf)
		if rerr == io.EOF {
			uploaded(buf)
			break
		}
		if rerr != nil && rerr != io.ErrUnexpectedEOF {
			uploaded(buf)
			cancel(rerr)
			wg.Wait()
			return fmt.Errorf("s3: put %q: read body: %w", key, rerr)
		}
		if int(num) == maxParts {
			uploaded(buf)
			cancel(nil)
			wg.Wait()
			return fmt.Errorf("s3: put %q: body exceeds %d parts of %d bytes", key, maxParts, partSize)
		}
		part = buf[:n]
	}
	wg.Wait()
	if err := failed(); err != nil {
		return err
	}
	slices.SortFunc(parts, func(a, b types.CompletedPart) int {
		return cmp.Compare(aws.ToInt32(a.PartNumber), aws.ToInt32(b.PartNumber))
	})
	_, err = s.client.CompleteMultipartUpload(ctx, &s3sdk.CompleteMultipartUploadInput{
		Bucket:          &s.bucket,
		Key:             &name,
		UploadId:        up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	})
	if err != nil && errorCode(err) == "NoSuchUpload" && s.completed(ctx, name, parts) {
		// A try of the completion succeeded but its answer was lost; the
		// SDK's retry then found the upload gone.
		return nil
	}
	if err != nil {
		return s.fail(objstore.OpPut, key, err)
	}
	return nil
}

// completed reports whether the object under name is the one the parts
// make: its ETag is the multipart ETag S3 (and MinIO) give it, the MD5 of
// the parts' MD5s and their count. Parts whose ETags are not MD5s
// (encrypted with KMS, say) never match, and the error stands.
func (s *Store) completed(ctx context.Context, name string, parts []types.CompletedPart) bool {
	h := md5.New()
	for _, p := range parts {
		sum, err := hex.DecodeString(strings.Trim(aws.ToString(p.ETag), `"`))
		if err != nil || len(sum) != md5.Size {
			return false
		}
		h.Write(sum)
	}
	want := fmt.Sprintf("%x-%d", h.Sum(nil), len(parts))
	out, err := s.client.HeadObject(ctx, &s3sdk.HeadObjectInput{Bucket: &s.bucket, Key: &name})
	return err == nil && strings.Trim(aws.ToString(out.ETag), `"`) == want
}

// partBuffer returns a buffer of size bytes, from the store's pool when
// size is the store's part size.
func (s *Store) partBuffer(size int64, pooled bool) []byte {
	if pooled {
		if p, ok := s.parts.Get().(*[]byte); ok {
			return (*p)[:size]
		}
	}
	return make([]byte, size)
}

// Delete implements objstore.Store. S3 answers success for a missing key.
func (s *Store) Delete(ctx context.Context, key string) error {
	name, err := s.root.Name(key)
	if err != nil {
		return fmt.Errorf("s3: delete: %w", err)
	}
	if _, err := s.client.DeleteObject(ctx, &s3sdk.DeleteObjectInput{Bucket: &s.bucket, Key: &name}); err != nil {
		if statusCode(err) == 404 { // some S3 servers say so; it is not an error here
			return nil
		}
		return s.fail(objstore.OpDelete, key, err)
	}
	return nil
}

// List implements objstore.Store with ListObjectsV2, whose order is the
// byte order of the UTF-8 keys, and whose StartAfter skips to the first key
// after startAfter on the server.
func (s *Store) List(ctx context.Context, prefix, startAfter string) iter.Seq2[objstore.ObjectInfo, error] {
	return func(yield func(objstore.ObjectInfo, error) bool) {
		in := &s3sdk.ListObjectsV2Input{
			Bucket:       &s.bucket,
			Prefix:       aws.String(s.root.ListPrefix(prefix)),
			EncodingType: types.EncodingTypeUrl,
		}
		if startAfter != "" {
			in.StartAfter = aws.String(s.root.ListPrefix(startAfter))
		}
		pages := s3sdk.NewListObjectsV2Paginator(s.client, in)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				yield(objstore.ObjectInfo{}, s.fail(objstore.OpList, prefix, err))
				return
			}
			for _, obj := range page.Contents {
				name, err := unescapeKey(aws.ToString(obj.Key))
				if err != nil {
					yield(objstore.ObjectInfo{}, fmt.Errorf("s3: list %q: %w", prefix, err))
					return
				}
				key, ok := s.root.Key(name)
				if !ok || !strings.HasPrefix(key, prefix) || key <= startAfter {
					continue // not ours: a server that ignores Prefix or StartAfter
				}
				info := objstore.ObjectInfo{Key: key, Size: aws.ToInt64(obj.Size), ModTime: aws.ToTime(obj.LastModified)}
				if !yield(info, nil) {
					return
				}
			}
		}
	}
}

// unescapeKey decodes a key of a listing asked for with EncodingType=url,
// which lets keys hold characters XML 1.0 cannot carry. S3 escapes them as
// in a query string.
func unescapeKey(k string) (string, error) {
	name, err := url.QueryUnescape(k)
	if err != nil {
		return "", fmt.Errorf("undecodable key %q in listing: %w", k, err)
	}
	return name, nil
}

// fail wraps an SDK error of op on key, mapping a missing object to
// objstore.ErrNotFound. A missing bucket is not a missing key.
func (s *Store) fail(op objstore.Op, key string, err error) error {
	code, status := errorCode(err), statusCode(err)
	var ce credentialsError
	switch {
	case code == "NoSuchKey" || (status == 404 && code != "NoSuchBucket" && op != objstore.OpList):
		return fmt.Errorf("s3: %s %q: %w", op, key, objstore.ErrNotFound)
	case code == "NoSuchBucket":
		return fmt.Errorf("s3: %s %q: bucket %q: %w: %w", op, key, s.bucket, objstore.ErrNoBucket, err)
	case status == 401 || status == 403 || errors.As(err, &ce):
		return fmt.Errorf("s3: %s %q in bucket %q: %w: %w", op, key, s.bucket, objstore.ErrAccessDenied, err)
	case refused(status):
		return fmt.Errorf("s3: %s %q in bucket %q: %w: %w", op, key, s.bucket, objstore.ErrRefused, err)
	}
	return fmt.Errorf("s3: %s %q in bucket %q: %w", op, key, s.bucket, err)
}

// refused reports whether an HTTP status says the request was refused
// before it was applied: a 4xx other than those with a meaning of their
// own (404, 408 timeout, 409 conflict, 412 and 416 conditions, 429
// throttling).
func refused(status int) bool {
	switch status {
	case 400, 401, 403, 405, 411, 413, 414, 431:
		return true
	}
	return false
}

// markedCredentials marks the errors of finding credentials, which the
// SDK returns before sending anything, so that fail can say access was
// denied.
type markedCredentials struct{ aws.CredentialsProvider }

func (m markedCredentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := m.CredentialsProvider.Retrieve(ctx)
	if err != nil {
		return c, credentialsError{err}
	}
	return c, nil
}

// credentialsError is a failure to find credentials.
type credentialsError struct{ err error }

func (e credentialsError) Error() string { return "no credentials: " + e.err.Error() }
func (e credentialsError) Unwrap() error { return e.err }

// statusCode is the HTTP status of a response error, or 0.
func statusCode(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// errorCode is S3's error code ("NoSuchKey", "PreconditionFailed"...), or "".
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// maxDeleteObjects is the most keys one DeleteObjects request takes.
const maxDeleteObjects = 1000

// MaxDeleteBatch implements [objstore.BatchDeleter].
func (s *Store) MaxDeleteBatch() int { return maxDeleteObjects }

// DeleteBatch implements [objstore.BatchDeleter] with one DeleteObjects
// request (quiet: S3 answers only the keys it could not delete). Keys
// S3 reports (a missing key is not one) come back in a
// *[objstore.DeleteError].
func (s *Store) DeleteBatch(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if len(keys) > maxDeleteObjects {
		return fmt.Errorf("s3: delete batch of %d keys, at most %d", len(keys), maxDeleteObjects)
	}
	ids := make([]types.ObjectIdentifier, len(keys))
	byName := make(map[string]string, len(keys))
	for i, k := range keys {
		name, err := s.root.Name(k)
		if err != nil {
			return fmt.Errorf("s3: delete batch: %w", err)
		}
		ids[i] = types.ObjectIdentifier{Key: aws.String(name)}
		byName[name] = k
	}
	out, err := s.client.DeleteObjects(ctx, &s3sdk.DeleteObjectsInput{
		Bucket: &s.bucket,
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("s3: delete batch of %d keys in bucket %q: %w", len(keys), s.bucket, err)
	}
	var de objstore.DeleteError
	for _, e := range out.Errors {
		name := aws.ToString(e.Key)
		if aws.ToString(e.Code) == "NoSuchKey" {
			continue
		}
		k, ok := byName[name]
		if !ok {
			k = name
		}
		de.Keys = append(de.Keys, k)
		de.Errs = append(de.Errs, fmt.Errorf("s3: delete %q: %s: %s", k, aws.ToString(e.Code), aws.ToString(e.Message)))
	}
	if len(de.Keys) > 0 {
		return &de
	}
	return nil
}
