package sharing

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// Response formats (the delta-sharing-capabilities header's
// responseformat).
const (
	FormatParquet = "parquet"
	FormatDelta   = "delta"
)

const (
	headerCapabilities = "delta-sharing-capabilities"
	headerTableVersion = "Delta-Table-Version"
	headerFileIDHash   = "fileidhash"
	contentNDJSON      = "application/x-ndjson; charset=utf-8"
)

// capabilities is what the client's delta-sharing-capabilities header
// says it reads.
type capabilities struct {
	formats          []string // in the client's order; parquet when absent
	readerFeatures   map[string]bool
	includeEndStream bool
	fileIDHash       string // "", parquet or delta
}

// parseCapabilities reads the header as the protocol defines it:
// "key=v1,v2;key=v", keys and values case-insensitive. Unknown keys are
// ignored; an unknown response format or fileidhash is 400.
func parseCapabilities(r *http.Request) (capabilities, *RequestError) {
	c := capabilities{readerFeatures: map[string]bool{}}
	for item := range strings.SplitSeq(strings.ToLower(r.Header.Get(headerCapabilities)), ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			continue
		}
		var vals []string
		for x := range strings.SplitSeq(v, ",") {
			if x = strings.TrimSpace(x); x != "" {
				vals = append(vals, x)
			}
		}
		switch strings.TrimSpace(k) {
		case "responseformat":
			for _, f := range vals {
				if f != FormatParquet && f != FormatDelta {
					return c, badRequest("responseformat %q is not parquet or delta", f)
				}
			}
			c.formats = vals
		case "readerfeatures":
			for _, f := range vals {
				c.readerFeatures[f] = true
			}
		case "includeendstreamaction":
			c.includeEndStream = v == "true"
		}
	}
	if len(c.formats) == 0 {
		c.formats = []string{FormatParquet}
	}
	if h := r.Header.Get(headerFileIDHash); h != "" {
		switch h = strings.ToLower(strings.TrimSpace(h)); h {
		case FormatParquet, FormatDelta:
			c.fileIDHash = h
		default:
			return c, badRequest("fileidhash %q is not parquet or delta", h)
		}
	}
	return c, nil
}

func (c capabilities) accepts(format string) bool { return slices.Contains(c.formats, format) }

// fileID is the protocol's stable id of a file: the hex MD5 of its path
// (the parquet scheme) or SHA-256 (the delta scheme), as the reference
// server derives them; the request's fileidhash header picks the scheme,
// else the response format does.
func fileID(path, scheme string) string {
	if scheme == FormatDelta {
		s := sha256.Sum256([]byte(path))
		return hex.EncodeToString(s[:])
	}
	s := md5.Sum([]byte(path))
	return hex.EncodeToString(s[:])
}

// Lines of the parquet response format.

type wireProtocol struct {
	MinReaderVersion int `json:"minReaderVersion"`
}

type wireFormat struct {
	Provider string `json:"provider"`
}

type wireMetadata struct {
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	Format           wireFormat        `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	Configuration    map[string]string `json:"configuration,omitempty"`
	Version          *int64            `json:"version,omitempty"`
	Size             *int64            `json:"size,omitempty"`
	NumFiles         *int64            `json:"numFiles,omitempty"`
}

// wireFile is a file (snapshot queries) or an add, remove or cdf (change
// queries) of the parquet format.
type wireFile struct {
	URL                 string             `json:"url"`
	ID                  string             `json:"id"`
	PartitionValues     map[string]*string `json:"partitionValues"`
	Size                int64              `json:"size"`
	Stats               string             `json:"stats,omitempty"`
	Version             *int64             `json:"version,omitempty"`
	Timestamp           *int64             `json:"timestamp,omitempty"`
	ExpirationTimestamp int64              `json:"expirationTimestamp"`
}

// Lines of the delta response format.

type wireDeltaProtocol struct {
	DeltaProtocol *actions.Protocol `json:"deltaProtocol"`
	Version       *int64            `json:"version,omitempty"`
}

type wireDeltaMetadata struct {
	DeltaMetadata *actions.Metadata `json:"deltaMetadata"`
	Version       *int64            `json:"version,omitempty"`
	Size          *int64            `json:"size,omitempty"`
	NumFiles      *int64            `json:"numFiles,omitempty"`
}

type wireDeltaFile struct {
	ID                   string         `json:"id"`
	DeletionVectorFileID string         `json:"deletionVectorFileId,omitempty"`
	Version              *int64         `json:"version,omitempty"`
	Timestamp            *int64         `json:"timestamp,omitempty"`
	ExpirationTimestamp  int64          `json:"expirationTimestamp"`
	DeltaSingleAction    actions.Action `json:"deltaSingleAction"`
}

// wireEndStream ends a response when the client asked for it, or carries
// the error of a response that failed after its first lines were sent.
type wireEndStream struct {
	RefreshToken              string `json:"refreshToken,omitempty"`
	NextPageToken             string `json:"nextPageToken,omitempty"`
	MinURLExpirationTimestamp *int64 `json:"minUrlExpirationTimestamp,omitempty"`
	ErrorMessage              string `json:"errorMessage,omitempty"`
}

// line is one NDJSON line: exactly one field set.
type line struct {
	Protocol  any            `json:"protocol,omitempty"`
	Metadata  any            `json:"metaData,omitempty"`
	File      any            `json:"file,omitempty"`
	Add       *wireFile      `json:"add,omitempty"`
	Remove    *wireFile      `json:"remove,omitempty"`
	CDF       *wireFile      `json:"cdf,omitempty"`
	EndStream *wireEndStream `json:"endStreamAction,omitempty"`
}

// ndjsonWriter streams a response's lines. The status and headers are
// committed with the first 64 KiB of lines (or at the end), so that an
// error found before then is answered with its own status; after it, an
// error ends the stream with an endStreamAction carrying errorMessage,
// which the protocol requires clients to fail on.
type ndjsonWriter struct {
	w         http.ResponseWriter
	r         *http.Request
	buf       []byte
	committed bool
	err       error
}

const commitThreshold = 64 << 10

func newNDJSON(w http.ResponseWriter, r *http.Request, version int64, format string, c capabilities) *ndjsonWriter {
	h := w.Header()
	h.Set("Content-Type", contentNDJSON)
	h.Set(headerTableVersion, strconv.FormatInt(version, 10))
	caps := "responseformat=" + format
	if c.includeEndStream {
		caps += ";includeendstreamaction=true"
	}
	h.Set(headerCapabilities, caps)
	if c.fileIDHash != "" {
		h.Set(headerFileIDHash, c.fileIDHash)
	}
	return &ndjsonWriter{w: w, r: r}
}

// setVersion changes the Delta-Table-Version header while nothing is
// committed.
func (n *ndjsonWriter) setVersion(v int64) {
	if !n.committed {
		n.w.Header().Set(headerTableVersion, strconv.FormatInt(v, 10))
	}
}

func (n *ndjsonWriter) write(l line) error {
	if n.err != nil {
		return n.err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // URLs keep their '&'
	if err := enc.Encode(l); err != nil {
		n.err = err
		return err
	}
	n.buf = append(n.buf, b.Bytes()...)
	if len(n.buf) >= commitThreshold {
		return n.flush()
	}
	return nil
}

func (n *ndjsonWriter) flush() error {
	if !n.committed {
		n.committed = true
		n.w.WriteHeader(http.StatusOK)
	}
	if len(n.buf) > 0 {
		if _, err := n.w.Write(n.buf); err != nil {
			n.err = err
			return err
		}
		n.buf = n.buf[:0]
	}
	if f, ok := n.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// finish ends the response: with err nil, the lines written; otherwise
// err's status, or an endStreamAction with errorMessage once committed.
func (n *ndjsonWriter) finish(err error) {
	if err == nil {
		n.flush()
		return
	}
	if !n.committed {
		for _, k := range []string{headerTableVersion, headerCapabilities, headerFileIDHash} {
			n.w.Header().Del(k)
		}
		writeError(n.w, n.r, err)
		return
	}
	if info := requestInfoOf(n.r); info != nil {
		info.err = err
	}
	msg := "the server failed while streaming the response; the operator's log has the cause"
	var re *RequestError
	if errors.As(err, &re) {
		msg = re.Message
	}
	n.err = nil
	n.write(line{EndStream: &wireEndStream{ErrorMessage: msg}})
	n.flush()
}
