package gcs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"

	"github.com/lakelog/lakelog/objstore"
)

// The Go client of Cloud Storage has no batch requests; the JSON API has
// (https://cloud.google.com/storage/docs/batch): one multipart/mixed POST
// carries up to 100 calls, each answered in its own part. DeleteBatch
// sends its deletes that way, over an HTTP client made by the Google API
// transport from the same client options (so with the same
// credentials), or plainly to STORAGE_EMULATOR_HOST.

// maxBatchCalls is the most calls one JSON API batch takes.
const maxBatchCalls = 100

// batcher sends JSON API batches.
type batcher struct {
	client *http.Client
	url    string // .../batch/storage/v1
}

// newBatcher makes the batcher of a store whose client New made from
// opts; nil when it cannot (the store then deletes one key at a time).
func newBatcher(ctx context.Context, settings objstore.Options, opts []option.ClientOption) *batcher {
	if host := settings.Get("STORAGE_EMULATOR_HOST"); host != "" {
		return &batcher{client: &http.Client{}, url: emulatorURL(host) + "/batch/storage/v1"}
	}
	opts = append([]option.ClientOption{option.WithScopes("https://www.googleapis.com/auth/devstorage.read_write")}, opts...)
	client, _, err := htransport.NewClient(ctx, opts...)
	if err != nil {
		return nil
	}
	return &batcher{client: client, url: "https://storage.googleapis.com/batch/storage/v1"}
}

// MaxDeleteBatch implements [objstore.BatchDeleter]: 100 keys a JSON API
// batch; 1 (a plain Delete) for a store over a caller's client, whose
// credentials it cannot reuse.
func (s *Store) MaxDeleteBatch() int {
	if s.batch == nil {
		return 1
	}
	return maxBatchCalls
}

// DeleteBatch implements [objstore.BatchDeleter] with one JSON API batch
// of delete calls. A missing object is not an error; calls that fail come
// back in a *[objstore.DeleteError]. The batch request is retried as the
// store's reads are when it fails before an answer.
func (s *Store) DeleteBatch(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if s.batch == nil {
		var de objstore.DeleteError
		for _, k := range keys {
			if err := s.Delete(ctx, k); err != nil {
				de.Keys, de.Errs = append(de.Keys, k), append(de.Errs, err)
			}
		}
		if len(de.Keys) > 0 {
			return &de
		}
		return nil
	}
	if len(keys) > maxBatchCalls {
		return fmt.Errorf("gcs: delete batch of %d keys, at most %d", len(keys), maxBatchCalls)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for i, k := range keys {
		name, err := s.root.Name(k)
		if err != nil {
			return fmt.Errorf("gcs: delete batch: %w", err)
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", "application/http")
		h.Set("Content-Transfer-Encoding", "binary")
		h.Set("Content-ID", "<"+strconv.Itoa(i)+">")
		pw, err := mw.CreatePart(h)
		if err != nil {
			return fmt.Errorf("gcs: delete batch: %w", err)
		}
		fmt.Fprintf(pw, "DELETE /storage/v1/b/%s/o/%s HTTP/1.1\r\n\r\n", url.PathEscape(s.name), url.PathEscape(name))
	}
	if err := mw.Close(); err != nil {
		return fmt.Errorf("gcs: delete batch: %w", err)
	}
	var status []int
	var msgs []string
	err := s.retry.Do(ctx, func(ctx context.Context) error {
		var err error
		status, msgs, err = s.batch.send(ctx, body.Bytes(), mw.Boundary(), len(keys))
		return err
	})
	if err != nil {
		return fmt.Errorf("gcs: delete batch of %d keys in bucket %q: %w", len(keys), s.name, err)
	}
	var de objstore.DeleteError
	for i, code := range status {
		switch {
		case code >= 200 && code < 300, code == http.StatusNotFound:
			continue
		}
		de.Keys = append(de.Keys, keys[i])
		de.Errs = append(de.Errs, fmt.Errorf("gcs: delete %q: HTTP %d: %s", keys[i], code, msgs[i]))
	}
	if len(de.Keys) > 0 {
		return &de
	}
	return nil
}

// batchError is a batch request the server refused as a whole.
type batchError struct {
	code int
	body string
}

func (e *batchError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.body) }

// Temporary marks a refusal worth another try (the retry reads it as a
// transient network error).
func (e *batchError) Timeout() bool   { return e.code == http.StatusTooManyRequests || e.code >= 500 }
func (e *batchError) Temporary() bool { return e.Timeout() }

// send posts one batch of n calls and returns each call's HTTP status and
// error message, by Content-ID.
func (b *batcher) send(ctx context.Context, body []byte, boundary string, n int) ([]int, []string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "multipart/mixed; boundary="+boundary)
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, nil, &batchError{code: resp.StatusCode, body: strings.TrimSpace(string(msg))}
	}
	mediaType, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mediaType, "multipart/") {
		return nil, nil, fmt.Errorf("batch answer of type %q", resp.Header.Get("Content-Type"))
	}
	status := make([]int, n)
	msgs := make([]string, n)
	for i := range status {
		status[i] = -1
	}
	mr := multipart.NewReader(resp.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("batch answer: %w", err)
		}
		id := strings.Trim(part.Header.Get("Content-ID"), "<>")
		id = id[strings.LastIndexByte(id, '-')+1:] // "response-3" answers "3"
		i, err := strconv.Atoi(id)
		if err != nil || i < 0 || i >= n {
			return nil, nil, fmt.Errorf("batch answer with Content-ID %q", part.Header.Get("Content-ID"))
		}
		r, err := http.ReadResponse(bufio.NewReader(part), nil)
		if err != nil {
			return nil, nil, fmt.Errorf("batch answer %d: %w", i, err)
		}
		msg, _ := io.ReadAll(io.LimitReader(r.Body, 1024))
		r.Body.Close()
		status[i], msgs[i] = r.StatusCode, strings.TrimSpace(string(msg))
	}
	for i, code := range status {
		if code < 0 {
			status[i], msgs[i] = http.StatusServiceUnavailable, "no answer in the batch"
		}
	}
	return status, msgs, nil
}
