package azure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/internal/cloudio"
	"github.com/lakelog/lakelog/objstore/internal/keyspace"
)

func init() {
	objstore.Register("az", func(ctx context.Context, u *url.URL, opts objstore.Options) (objstore.Store, error) {
		if u.Host == "" {
			return nil, fmt.Errorf("azure: URI %q names no container; want az://container/prefix", u.Redacted())
		}
		if err := opts.Check("azure", StorageOptions...); err != nil {
			return nil, err
		}
		return New(ctx, u.Host, u.Path, func(o *options) { o.settings = opts })
	})
}

// StorageOptions are the keys of objstore.Options an az:// store reads
// (instead of the same names in the environment).
var StorageOptions = []string{"AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT",
	"AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_ACCESS_KEY", "AZURE_STORAGE_MASTER_KEY", "AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT",
	"AZURE_STORAGE_USE_EMULATOR", "AZURITE_BLOB_STORAGE_URL", "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_SAS_KEY"}

const (
	// DefaultBlockSize is the size of the blocks of a staged upload, and
	// the largest body a plain Put sends in one request.
	DefaultBlockSize = 8 << 20
	// maxBlocks is Azure's limit on the blocks of one blob.
	maxBlocks = 50000
	// DefaultBlockConcurrency is how many blocks of one staged upload are
	// sent at once, while the body's next block is being read.
	DefaultBlockConcurrency = 4
)

// The well-known account of the Azure storage emulators (Azurite), which
// Microsoft publishes; it guards nothing.
const (
	emulatorAccount = "devstoreaccount1"
	emulatorKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Store is an objstore.Store over one Azure Blob Storage container, rooted
// at a prefix. It is safe for concurrent use.
type Store struct {
	container *container.Client
	name      string
	root      keyspace.Root
	blockSize int64
	blockConc int
	retry     cloudio.Retry
}

var (
	_ objstore.Store        = (*Store)(nil)
	_ objstore.BatchDeleter = (*Store)(nil)
	_ objstore.RangeReader  = (*Store)(nil)
)

// Location implements [objstore.Locator]: az://container/prefix.
func (s *Store) Location() string {
	return s.root.Location("az", s.name)
}

// Option configures New.
type Option func(*options)

type options struct {
	client        *azblob.Client
	clientOptions *azblob.ClientOptions
	blockSize     int64
	blockConc     int
	policy        objstore.RetryPolicy
	settings      objstore.Options // storage options given to objstore.OpenWith
}

// WithClient makes the store use client as it is; the environment is then
// not read.
func WithClient(client *azblob.Client) Option { return func(o *options) { o.client = client } }

// WithClientOptions sets the options (HTTP transport, retry policy...) of
// the client New makes from the environment.
func WithClientOptions(opts *azblob.ClientOptions) Option {
	return func(o *options) { o.clientOptions = opts }
}

// WithBlockSize sets the block size of staged uploads. Bodies up to this
// size are sent in one request.
func WithBlockSize(n int64) Option { return func(o *options) { o.blockSize = n } }

// WithBlockConcurrency sets how many blocks of one staged upload are sent
// at once (at least 1; DefaultBlockConcurrency unless set). An upload holds
// at most this many block buffers: n × the block size of memory.
func WithBlockConcurrency(n int) Option { return func(o *options) { o.blockConc = n } }

// WithRetryPolicy tunes retries, backoff, the read deadline and stall
// detection (see [objstore.RetryPolicy]) of the client New makes from the
// environment; with WithClient only the retry of broken-off reads follows
// it.
func WithRetryPolicy(p objstore.RetryPolicy) Option { return func(o *options) { o.policy = p } }

// New returns the store over container rooted at prefix ("" for the whole
// container; leading and trailing '/' are ignored). Unless WithClient is
// given, the account and its credentials come from the environment, read
// as delta-rs (object_store) reads it, with the first that applies taking
// effect:
//
//   - AZURE_STORAGE_CONNECTION_STRING: a connection string, as the Azure
//     CLI takes it (Azurite: BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1).
//   - AZURE_STORAGE_USE_EMULATOR=true: the emulator's well-known account at
//     AZURITE_BLOB_STORAGE_URL (default http://127.0.0.1:10000).
//   - AZURE_STORAGE_ACCOUNT_NAME (or AZURE_STORAGE_ACCOUNT) with
//     AZURE_STORAGE_ACCOUNT_KEY (or AZURE_STORAGE_ACCESS_KEY) for a shared
//     key, or with AZURE_STORAGE_SAS_TOKEN (or AZURE_STORAGE_SAS_KEY) for a
//     SAS token. The service URL is AZURE_STORAGE_ENDPOINT (or
//     AZURE_ENDPOINT) when set, and https://ACCOUNT.blob.core.windows.net/
//     otherwise.
//
// Microsoft Entra ID (service principals, managed identities) is not read
// from the environment; build such a client and pass it with WithClient.
// New sends no request; a missing container shows on first use.
func New(ctx context.Context, containerName, prefix string, opts ...Option) (*Store, error) {
	o := options{blockSize: DefaultBlockSize, blockConc: DefaultBlockConcurrency}
	for _, opt := range opts {
		opt(&o)
	}
	if containerName == "" {
		return nil, errors.New("azure: empty container name")
	}
	if o.blockSize <= 0 {
		return nil, fmt.Errorf("azure: block size %d is not positive", o.blockSize)
	}
	if o.blockConc < 1 {
		return nil, fmt.Errorf("azure: block concurrency %d is not positive", o.blockConc)
	}
	client := o.client
	if client == nil {
		var err error
		if client, err = clientFromEnv(o.settings, clientOptions(o.clientOptions, o.policy)); err != nil {
			return nil, err
		}
	}
	return &Store{
		container: client.ServiceClient().NewContainerClient(containerName),
		name:      containerName,
		root:      keyspace.New(prefix),
		blockSize: o.blockSize,
		blockConc: o.blockConc,
		retry:     cloudio.RetryOf(o.policy),
	}, nil
}

// clientOptions completes the caller's client options with the policy:
// the SDK's retry policy (p.Attempts tries, backoff between p.BaseDelay
// and p.MaxDelay; it retries 408, 429, 5xx and transport errors, stalls
// among them) unless the caller set one, and the stall watchdog around
// the caller's transport or the default one. No TryTimeout: it would
// also cut a large transfer that is slow but moving, which the watchdog
// lets finish.
func clientOptions(in *azblob.ClientOptions, p objstore.RetryPolicy) *azblob.ClientOptions {
	p = p.WithDefaults()
	var out azblob.ClientOptions
	if in != nil {
		out = *in
	}
	if reflect.ValueOf(out.Retry).IsZero() {
		out.Retry = policy.RetryOptions{MaxRetries: int32(p.Attempts - 1), RetryDelay: p.BaseDelay, MaxRetryDelay: p.MaxDelay}
	}
	var base cloudio.Doer = http.DefaultClient
	if out.Transport != nil {
		base = out.Transport
	}
	out.Transport = cloudio.WatchClient(base, p.StallTimeout)
	return &out
}

// clientFromEnv makes a client from the environment (and settings, which
// win over it), as New describes.
func clientFromEnv(settings objstore.Options, opts *azblob.ClientOptions) (*azblob.Client, error) {
	firstEnv := func(names ...string) string {
		for _, n := range names {
			if v := settings.Get(n); v != "" {
				return v
			}
		}
		return ""
	}
	if cs := settings.Get("AZURE_STORAGE_CONNECTION_STRING"); cs != "" {
		c, err := azblob.NewClientFromConnectionString(cs, opts)
		if err != nil {
			return nil, fmt.Errorf("azure: AZURE_STORAGE_CONNECTION_STRING: %w", err)
		}
		return c, nil
	}
	account := firstEnv("AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT")
	key := firstEnv("AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_ACCESS_KEY", "AZURE_STORAGE_MASTER_KEY")
	endpoint := firstEnv("AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT")
	if emu, _ := strconv.ParseBool(settings.Get("AZURE_STORAGE_USE_EMULATOR")); emu {
		if account == "" {
			account, key = emulatorAccount, emulatorKey
		}
		base := cmpOr(settings.Get("AZURITE_BLOB_STORAGE_URL"), "http://127.0.0.1:10000")
		endpoint = strings.TrimRight(base, "/") + "/" + account
	}
	if account == "" {
		return nil, errors.New("azure: no account configured: set AZURE_STORAGE_CONNECTION_STRING, " +
			"AZURE_STORAGE_ACCOUNT_NAME with AZURE_STORAGE_ACCOUNT_KEY or AZURE_STORAGE_SAS_TOKEN, " +
			"or AZURE_STORAGE_USE_EMULATOR=true")
	}
	if endpoint == "" {
		endpoint = "https://" + account + ".blob.core.windows.net/"
	}
	if key != "" {
		cred, err := azblob.NewSharedKeyCredential(account, key)
		if err != nil {
			return nil, fmt.Errorf("azure: shared key of account %q: %w", account, err)
		}
		c, err := azblob.NewClientWithSharedKeyCredential(endpoint, cred, opts)
		if err != nil {
			return nil, fmt.Errorf("azure: client for %s: %w", endpoint, err)
		}
		return c, nil
	}
	if sas := firstEnv("AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_SAS_KEY"); sas != "" {
		c, err := azblob.NewClientWithNoCredential(strings.TrimRight(endpoint, "/")+"/?"+strings.TrimPrefix(sas, "?"), opts)
		if err != nil {
			return nil, fmt.Errorf("azure: client for %s: %w", endpoint, err)
		}
		return c, nil
	}
	return nil, fmt.Errorf("azure: account %q has no key or SAS token: set AZURE_STORAGE_ACCOUNT_KEY or AZURE_STORAGE_SAS_TOKEN, or pass a client with WithClient", account)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Container returns the container client the store sends requests with.
func (s *Store) Container() *container.Client { return s.container }

// blob returns the client of key's blob, after checking the key.
func (s *Store) blob(op objstore.Op, key string) (*blockblob.Client, error) {
	name, err := s.root.Name(key)
	if err != nil {
		return nil, fmt.Errorf("azure: %s: %w", op, err)
	}
	return s.container.NewBlockBlobClient(name), nil
}

// Get implements objstore.Store.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.blob(objstore.OpGet, key)
	if err != nil {
		return nil, err
	}
	var data []byte
	err = s.retry.Do(ctx, func(ctx context.Context) error {
		resp, err := b.DownloadStream(ctx, nil)
		if err != nil {
			return s.fail(objstore.OpGet, key, err)
		}
		defer resp.Body.Close()
		size := int64(-1)
		if resp.ContentLength != nil {
			size = *resp.ContentLength
		}
		if data, err = cloudio.ReadBody(resp.Body, size); err == nil {
			err = cloudio.CheckLength(data, size)
		}
		if err != nil {
			return s.fail(objstore.OpGet, key, err)
		}
		return nil
	})
	return data, err
}

// GetRange implements objstore.Store with a ranged download. An empty
// range and a range starting at or past the end cost one HEAD more.
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

// getRange downloads n bytes at off and hands the body, with its
// Content-Length and Content-Range, to read, which returns the count of
// bytes it kept; the whole download is retried when reading fails
// transiently. A range that yields no byte (empty, at or past the end)
// is answered after a HEAD: 0 at the end, an error past it or, before
// it, a short read.
func (s *Store) getRange(ctx context.Context, key string, off, n int64, read cloudio.RangeRead) (int, error) {
	if off < 0 || n < 0 {
		return 0, fmt.Errorf("azure: getrange %q: negative offset %d or length %d", key, off, n)
	}
	b, err := s.blob(objstore.OpGetRange, key)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return cloudio.EndRange(ctx, "azure", key, off, 0, 0, true, s.sizeOf(key))
	}
	got := 0
	empty := false
	err = s.retry.Do(ctx, func(ctx context.Context) error {
		resp, err := b.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: n}})
		if err != nil {
			if status(err) == http.StatusRequestedRangeNotSatisfiable {
				empty = true
				return nil
			}
			return s.fail(objstore.OpGetRange, key, err)
		}
		defer resp.Body.Close()
		if got, err = read(resp.Body, derefInt64(resp.ContentLength), derefString(resp.ContentRange)); err != nil {
			return s.fail(objstore.OpGetRange, key, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	// Some servers answer a range at the end with no bytes rather than
	// 416; before the end it is a short read.
	return cloudio.EndRange(ctx, "azure", key, off, n, got, empty, s.sizeOf(key))
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
	b, err := s.blob(op, key)
	if err != nil {
		return objstore.ObjectInfo{}, err
	}
	props, err := b.GetProperties(ctx, nil)
	if err != nil {
		return objstore.ObjectInfo{}, s.fail(op, key, err)
	}
	info := objstore.ObjectInfo{Key: key, Size: derefInt64(props.ContentLength)}
	if props.LastModified != nil {
		info.ModTime = *props.LastModified
	}
	return info, nil
}

// Put implements objstore.Store.
//
// With IfAbsent the body is read into memory and sent in one Put Blob with
// If-None-Match: *, exactly once: the client's automatic retries are off
// for it (see the package documentation). A 409 BlobAlreadyExists or a 412
// ConditionNotMet is objstore.ErrExists.
//
// Otherwise a body up to the block size goes in one Put Blob and a longer
// one, or one of unknown size, is staged in blocks and committed with Put
// Block List. Either replaces the blob in one step; a body that fails
// leaves only uncommitted blocks, which Azure discards.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, opts objstore.PutOptions) error {
	b, err := s.blob(objstore.OpPut, key)
	if err != nil {
		return err
	}
	if opts.IfAbsent {
		data, err := cloudio.ReadBody(body, opts.Size)
		if err != nil {
			return fmt.Errorf("azure: put %q: read body: %w", key, err)
		}
		once := policy.WithRetryOptions(ctx, policy.RetryOptions{MaxRetries: -1})
		_, err = b.Upload(once, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{
				IfNoneMatch: to(azcore.ETagAny),
			}},
		})
		if err != nil {
			if bloberror.HasCode(err, bloberror.BlobAlreadyExists, bloberror.ConditionNotMet) ||
				status(err) == http.StatusPreconditionFailed {
				return fmt.Errorf("azure: put %q: %w", key, objstore.ErrExists)
			}
			return s.fail(objstore.OpPut, key, err)
		}
		return nil
	}
	first, err := cloudio.ReadBody(io.LimitReader(body, s.blockSize), min(opts.Size, s.blockSize))
	if err != nil {
		return fmt.Errorf("azure: put %q: read body: %w", key, err)
	}
	if int64(len(first)) < s.blockSize {
		if _, err := b.Upload(ctx, streaming.NopCloser(bytes.NewReader(first)), nil); err != nil {
			return s.fail(objstore.OpPut, key, err)
		}
		return nil
	}
	blockSize := s.blockSize
	if opts.Size > blockSize*maxBlocks {
		blockSize = (opts.Size + maxBlocks - 1) / maxBlocks
	}
	src := &objstore.BodyReader{R: io.MultiReader(bytes.NewReader(first), body)}
	_, err = b.UploadStream(ctx, src, &blockblob.UploadStreamOptions{BlockSize: blockSize, Concurrency: s.blockConc})
	if err != nil {
		if src.Err != nil {
			return fmt.Errorf("azure: put %q: read body: %w", key, src.Err)
		}
		return s.fail(objstore.OpPut, key, err)
	}
	return nil
}

// Delete implements objstore.Store. Deleting a missing key succeeds.
func (s *Store) Delete(ctx context.Context, key string) error {
	b, err := s.blob(objstore.OpDelete, key)
	if err != nil {
		return err
	}
	if _, err := b.Delete(ctx, nil); err != nil && !bloberror.HasCode(err, bloberror.BlobNotFound) {
		return s.fail(objstore.OpDelete, key, err)
	}
	return nil
}

// List implements objstore.Store with a flat listing of the prefix.
//
// Azure (Azurite certainly) orders names by their UTF-16 code units, which
// differs from byte order only between characters at or above U+10000
// (surrogate pairs in UTF-16) and characters from U+E000 to U+FFFF. So List
// yields names as they come until the first one holding a character at or
// above U+10000; that one and all after it are sorted by their bytes before
// they are yielded. Names before it cannot sort after anything that
// follows, so the result is in byte order whichever order the server keeps,
// and a listing with no such characters streams.
//
// startAfter is passed as startFrom, cut before its first character at or
// above U+E000 (where the two orders part) or its first invalid byte, so
// that a server that honours startFrom skips only what the contract skips;
// keys up to startAfter are then dropped here, so a server that ignores
// startFrom is only slower.
func (s *Store) List(ctx context.Context, prefix, startAfter string) iter.Seq2[objstore.ObjectInfo, error] {
	return func(yield func(objstore.ObjectInfo, error) bool) {
		opts := &container.ListBlobsFlatOptions{Prefix: to(s.root.ListPrefix(prefix))}
		if from := orderSafePrefix(s.root.ListPrefix(startAfter)); from != "" {
			opts.StartFrom = to(from)
		}
		var held []objstore.ObjectInfo // from the first name above the BMP on
		pages := s.container.NewListBlobsFlatPager(opts)
		for pages.More() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				yield(objstore.ObjectInfo{}, s.fail(objstore.OpList, prefix, err))
				return
			}
			for _, item := range page.Segment.BlobItems {
				if item == nil || item.Name == nil {
					continue
				}
				key, ok := s.root.Key(*item.Name)
				if !ok || !strings.HasPrefix(key, prefix) || key <= startAfter {
					continue
				}
				info := objstore.ObjectInfo{Key: key}
				if p := item.Properties; p != nil {
					info.Size = derefInt64(p.ContentLength)
					if p.LastModified != nil {
						info.ModTime = *p.LastModified
					}
				}
				if held != nil || aboveBMP(key) {
					held = append(held, info)
					continue
				}
				if !yield(info, nil) {
					return
				}
			}
		}
		slices.SortFunc(held, func(a, b objstore.ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
		for _, info := range held {
			if !yield(info, nil) {
				return
			}
		}
	}
}

// aboveBMP reports whether s holds a character at or above U+10000, which
// UTF-16 and UTF-8 order differently from U+E000..U+FFFF.
func aboveBMP(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xF0 { // the lead byte of a 4-byte UTF-8 sequence
			return true
		}
	}
	return false
}

// orderSafePrefix returns the longest prefix of name that holds no
// character at or above U+E000, where UTF-16 order and byte order part, and
// no invalid UTF-8, which a blob name and so startFrom cannot hold. Every
// key after name in byte order is at or after that prefix in either order.
func orderSafePrefix(name string) string {
	for i, r := range name {
		if r >= 0xE000 { // utf8.RuneError, for an invalid byte, is U+FFFD
			return name[:i]
		}
	}
	return name
}

// fail wraps a client error of op on key, mapping a missing blob to
// objstore.ErrNotFound. A missing container is not a missing key.
func (s *Store) fail(op objstore.Op, key string, err error) error {
	if op != objstore.OpList && (bloberror.HasCode(err, bloberror.BlobNotFound) ||
		(status(err) == http.StatusNotFound && !bloberror.HasCode(err, bloberror.ContainerNotFound))) {
		return fmt.Errorf("azure: %s %q: %w", op, key, objstore.ErrNotFound)
	}
	switch code := status(err); {
	case bloberror.HasCode(err, bloberror.ContainerNotFound):
		return fmt.Errorf("azure: %s %q: container %q: %w: %w", op, key, s.name, objstore.ErrNoBucket, err)
	case code == 401 || code == 403 ||
		bloberror.HasCode(err, bloberror.AuthenticationFailed, bloberror.AuthorizationFailure, bloberror.NoAuthenticationInformation):
		return fmt.Errorf("azure: %s %q in container %q: %w: %w", op, key, s.name, objstore.ErrAccessDenied, err)
	case code == 400 || code == 405 || code == 411 || code == 413:
		return fmt.Errorf("azure: %s %q in container %q: %w: %w", op, key, s.name, objstore.ErrRefused, err)
	}
	return fmt.Errorf("azure: %s %q in container %q: %w", op, key, s.name, err)
}

// status is the HTTP status of a response error, or 0.
func status(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

func to[T any](v T) *T { return &v }

func derefString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func derefInt64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// maxBlobBatch is the most sub-requests one blob batch takes.
const maxBlobBatch = 256

// MaxDeleteBatch implements [objstore.BatchDeleter].
func (s *Store) MaxDeleteBatch() int { return maxBlobBatch }

// DeleteBatch implements [objstore.BatchDeleter] with one blob batch of
// delete sub-requests. A blob that was not there is not an error; the
// others' failures come back in a *[objstore.DeleteError].
func (s *Store) DeleteBatch(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if len(keys) > maxBlobBatch {
		return fmt.Errorf("azure: delete batch of %d keys, at most %d", len(keys), maxBlobBatch)
	}
	bb, err := s.container.NewBatchBuilder()
	if err != nil {
		return fmt.Errorf("azure: delete batch: %w", err)
	}
	byName := make(map[string]string, len(keys))
	for _, k := range keys {
		name, err := s.root.Name(k)
		if err != nil {
			return fmt.Errorf("azure: delete batch: %w", err)
		}
		byName[name] = k
		if err := bb.Delete(name, nil); err != nil {
			return fmt.Errorf("azure: delete batch: %w", err)
		}
	}
	resp, err := s.container.SubmitBatch(ctx, bb, nil)
	if err != nil {
		return fmt.Errorf("azure: delete batch of %d keys: %w", len(keys), err)
	}
	var de objstore.DeleteError
	for _, item := range resp.Responses {
		if item == nil || item.Error == nil || bloberror.HasCode(item.Error, bloberror.BlobNotFound) {
			continue
		}
		name := ""
		if item.BlobName != nil {
			name = *item.BlobName
		}
		k, ok := byName[name]
		if !ok {
			k = name
		}
		de.Keys = append(de.Keys, k)
		de.Errs = append(de.Errs, fmt.Errorf("azure: delete %q: %w", k, item.Error))
	}
	if len(de.Keys) > 0 {
		return &de
	}
	return nil
}
