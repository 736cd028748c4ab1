package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"google.golang.org/api/googleapi"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/objstore/azure"
	"github.com/lakelog/lakelog/objstore/gcs"
)

// cloudRows is the data-path table size of the object-store suites: MinIO
// gets the 10M rows at full scale, the GCS and Azure emulators a
// tenth of it; the small scale is sized for CI (the three suites in about
// two minutes on 2 cores).
func cloudRows(scale, suite string) int64 {
	full := scale == "full"
	switch {
	case suite == "datapath-s3" && full:
		return 10_000_000
	case suite == "datapath-s3":
		return 100_000
	case full:
		return 1_000_000
	}
	return 50_000
}

// cloudTarget is one object-store server the data-path suite runs on.
type cloudTarget struct {
	suite, title string
	// upstream is the server's base URL; the proxy forwards to it.
	upstream string
	proxy    proxyOptions
	// uri is the table URI of name under the run's prefix.
	uri func(name string) string
	// setup creates the bucket or container (directly on the server).
	setup func(ctx context.Context) error
	// lakelogEnv and deltaEnv point each engine's children at the proxy;
	// deltaStorage are delta-rs's storage options for it.
	lakelogEnv, deltaEnv func(proxy *countingProxy) []string
	deltaStorage         func(proxy *countingProxy) map[string]string
	note                 string
}

// dataPathS3 / dataPathGCS / dataPathAzure: the data path (append, full
// scan, 1% range scan, projection) on an object-store server, both
// engines, both engines' tables, every request counted by a proxy.
func dataPathS3(ctx context.Context, cfg *config, rep *report) error {
	ep := cmpOrEnv("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
	if ep == "" {
		return missingServer(rep, "datapath-s3", "AWS_ENDPOINT_URL")
	}
	if err := ensureBucket(ctx); err != nil {
		return err
	}
	run := randomID()
	t := &cloudTarget{suite: "datapath-s3", title: "data path, S3 (MinIO)", upstream: ep,
		proxy: proxyOptions{keepHost: true}, // SigV4 signs the Host header
		uri:   func(name string) string { return fmt.Sprintf("s3://%s/datapath-%s/%s", bucket, run, name) },
		setup: func(context.Context) error { return nil },
		lakelogEnv: func(p *countingProxy) []string {
			return []string{"AWS_ENDPOINT_URL=" + p.URL(), "AWS_ENDPOINT_URL_S3=" + p.URL()}
		},
		deltaEnv: func(p *countingProxy) []string {
			return []string{"AWS_ENDPOINT_URL=" + p.URL(), "AWS_ENDPOINT_URL_S3=" + p.URL()}
		},
		deltaStorage: func(p *countingProxy) map[string]string {
			s := map[string]string{"AWS_ENDPOINT_URL": p.URL()}
			for k, v := range s3Storage {
				s[k] = v
			}
			return s
		},
	}
	return cloudDataPath(ctx, cfg, rep, t)
}

func dataPathGCS(ctx context.Context, cfg *config, rep *report) error {
	host := os.Getenv("STORAGE_EMULATOR_HOST")
	if host == "" {
		return missingServer(rep, "datapath-gcs", "STORAGE_EMULATOR_HOST")
	}
	ep := host
	if !strings.Contains(ep, "://") {
		ep = "http://" + ep
	}
	run := randomID()
	t := &cloudTarget{suite: "datapath-gcs", title: "data path, GCS (fake-gcs-server)", upstream: ep,
		// fake-gcs-server routes by its own public host.
		proxy: proxyOptions{rewrite: fakeGCSUpload, respond: fakeGCSUploaded},
		uri:   func(name string) string { return fmt.Sprintf("gs://%s/datapath-%s/%s", bucket, run, name) },
		setup: ensureGCSBucket,
		lakelogEnv: func(p *countingProxy) []string {
			return []string{"STORAGE_EMULATOR_HOST=" + p.Addr()}
		},
		deltaEnv: func(p *countingProxy) []string { return []string{"STORAGE_EMULATOR_HOST=" + p.Addr()} },
		deltaStorage: func(p *countingProxy) map[string]string {
			// object_store takes an emulator's URL from the service
			// account key (gcs_base_url) and sends no token with
			// disable_oauth.
			key, _ := json.Marshal(map[string]any{"gcs_base_url": p.URL(), "disable_oauth": true,
				"client_email": "", "private_key": "", "private_key_id": ""})
			return map[string]string{"google_service_account_key": string(key), "allow_http": "true"}
		},
		note: "delta-rs (object_store) uploads objects with the XML API's PUT /bucket/object, which fake-gcs-server " +
			"accepts only as a signed-URL upload: the proxy adds X-Goog-Algorithm to such PUTs and copies the answer's etag into the ETag header " +
			"object_store needs (same requests, same bytes); " +
			"fake-gcs-server then ignores x-goog-if-generation-match, so delta-rs's commits here are not conditional (one writer, no harm)",
	}
	return cloudDataPath(ctx, cfg, rep, t)
}

// fakeGCSUpload marks an XML API object PUT (PUT /bucket/object, no
// uploadType) as a signed-URL upload, the only XML upload fake-gcs-server
// takes. lakelog's client uses the JSON API and never sends one.
func fakeGCSUpload(r *http.Request) {
	if r.Method != http.MethodPut || strings.HasPrefix(r.URL.Path, "/upload/") || strings.HasPrefix(r.URL.Path, "/storage/") {
		return
	}
	q := r.URL.Query()
	if q.Get("uploadType") != "" || q.Get("X-Goog-Algorithm") != "" || q.Has("uploadId") {
		return
	}
	q.Set("X-Goog-Algorithm", "GOOG4-RSA-SHA256")
	r.URL.RawQuery = q.Encode()
}

// fakeGCSUploaded gives the response to a signed-URL upload the ETag
// header the XML API sends (object_store needs it) from the object's JSON
// resource fake-gcs-server answers with.
func fakeGCSUploaded(r *http.Response) error {
	if r.Request.Method != http.MethodPut || r.Request.URL.Query().Get("X-Goog-Algorithm") == "" ||
		r.StatusCode != http.StatusOK || r.Header.Get("ETag") != "" {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var obj struct {
		Etag       string `json:"etag"`
		Generation string `json:"generation"`
	}
	if json.Unmarshal(body, &obj) == nil && obj.Etag != "" {
		r.Header.Set("ETag", `"`+obj.Etag+`"`)
		r.Header.Set("x-goog-generation", obj.Generation)
	}
	return nil
}

func ensureGCSBucket(ctx context.Context) error {
	st, err := gcs.New(ctx, bucket, "")
	if err != nil {
		return err
	}
	defer st.Close()
	err = st.Client().Bucket(bucket).Create(ctx, "lakelog", nil)
	var ge *googleapi.Error
	if err != nil && !(errors.As(err, &ge) && ge.Code == http.StatusConflict) {
		return fmt.Errorf("runner: create GCS bucket %s: %w", bucket, err)
	}
	return nil
}

func dataPathAzure(ctx context.Context, cfg *config, rep *report) error {
	cs := os.Getenv("AZURE_STORAGE_CONNECTION_STRING")
	if cs == "" {
		return missingServer(rep, "datapath-azure", "AZURE_STORAGE_CONNECTION_STRING")
	}
	kv := map[string]string{}
	for _, f := range strings.Split(cs, ";") {
		if k, v, ok := strings.Cut(f, "="); ok {
			kv[k] = v
		}
	}
	account, key, blob := kv["AccountName"], kv["AccountKey"], kv["BlobEndpoint"]
	if account == "" || key == "" || blob == "" {
		return fmt.Errorf("runner: AZURE_STORAGE_CONNECTION_STRING needs AccountName, AccountKey and BlobEndpoint (Azurite's, see .ci/services.sh)")
	}
	ep, path, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(blob, "http://"), "https://"), "/")
	run := randomID()
	t := &cloudTarget{suite: "datapath-azure", title: "data path, Azure (Azurite)", upstream: "http://" + ep,
		uri: func(name string) string { return fmt.Sprintf("az://%s/datapath-%s/%s", bucket, run, name) },
		setup: func(ctx context.Context) error {
			st, err := azure.New(ctx, bucket, "")
			if err != nil {
				return err
			}
			if _, err := st.Container().Create(ctx, nil); err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
				return fmt.Errorf("runner: create Azure container %s: %w", bucket, err)
			}
			return nil
		},
		lakelogEnv: func(p *countingProxy) []string {
			return []string{fmt.Sprintf("AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=%s/%s;",
				account, key, p.URL(), path)}
		},
		deltaEnv: func(p *countingProxy) []string {
			// object_store finds the emulator at AZURITE_BLOB_STORAGE_URL.
			return []string{"AZURITE_BLOB_STORAGE_URL=" + p.URL(), "AZURE_STORAGE_CONNECTION_STRING="}
		},
		deltaStorage: func(*countingProxy) map[string]string {
			return map[string]string{"azure_storage_account_name": account, "azure_storage_account_key": key,
				"azure_storage_use_emulator": "true", "allow_http": "true"}
		},
	}
	return cloudDataPath(ctx, cfg, rep, t)
}

func cmpOrEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// missingServer skips a suite whose server is not configured, except in
// CI, where it fails.
func missingServer(rep *report, suite, env string) error {
	if os.Getenv("CI") == "true" {
		return fmt.Errorf("%s is not set (source .ci/services.sh && services_start)", env)
	}
	rep.note("%s: skipped, %s is not set (source .ci/services.sh && services_start)", suite, env)
	return nil
}

// cloudRun is one object-store suite in progress.
type cloudRun struct {
	cfg     *config
	proxy   *countingProxy
	engines map[string]*Engine
	storage map[string]string
}

// run runs the spec made by mk cfg.count times under the engine named by,
// each with the proxy's counters fresh, and returns the median outcome
// and the traffic of the last run.
func (c *cloudRun) run(ctx context.Context, by string, mk func() Spec) (*Outcome, traffic, error) {
	e := c.engines[by]
	var outs []Outcome
	var t traffic
	for range c.cfg.count {
		s := mk()
		if by == "delta-rs" {
			s.Storage = c.storage
		}
		c.proxy.take()
		o, err := run(ctx, e, s)
		t = c.proxy.take()
		if err != nil {
			return nil, t, err
		}
		outs = append(outs, o)
	}
	return medianOutcome(outs), t, nil
}

func cloudDataPath(ctx context.Context, cfg *config, rep *report, t *cloudTarget) error {
	if err := t.setup(ctx); err != nil {
		return err
	}
	proxy, err := startProxy(t.upstream, t.proxy)
	if err != nil {
		return err
	}
	defer proxy.Close()
	c := &cloudRun{cfg: cfg, proxy: proxy, engines: map[string]*Engine{}, storage: t.deltaStorage(proxy)}
	with := func(e *Engine, env []string) *Engine {
		return &Engine{Name: e.Name, Command: e.Command, Env: append(slices.Clone(e.Env), env...)}
	}
	c.engines["lakelog"] = with(cfg.lakelog, t.lakelogEnv(proxy))
	engines := []string{"lakelog"}
	if cfg.deltars != nil {
		c.engines["delta-rs"] = with(cfg.deltars, t.deltaEnv(proxy))
		engines = append(engines, "delta-rs")
	}
	n := cloudRows(cfg.scale, t.suite)
	target := cfg.targetFileSize
	if target == 0 {
		target = workload.TargetFileSize(n)
		if cfg.scale != "full" {
			// About 40 files rather than 150: the small scale is for
			// CI, and each file costs a few round trips per scan.
			target *= 4
		}
	}
	rep.note("%s: %d rows of the data-path table (see data path), target file size %d bytes for both writers, "+
		"tables under %s; every request of both engines' children goes through one counting reverse proxy in the runner "+
		"(requests by method, response body bytes fetched, request body bytes sent, table open and log reads included; "+
		"with -count above 1, the last run's); the 1%% range scan and the projection read the same table as the full scan",
		t.suite, n, target, t.uri(""))
	if t.note != "" {
		rep.note("%s: %s", t.suite, t.note)
	}
	rep.note("%s: every scan row times delta-rs's QueryBuilder SQL, DeltaTable.scan and the pyarrow dataset and shows the fastest in the delta-rs columns%s; %s",
		t.suite, map[bool]string{true: "; the few-large-files shape (see data path) is read on MinIO only", false: ""}[t.suite == "datapath-s3"], stringsNote(cfg))
	var rows []*Row
	add := func(r *Row) { rep.add(r); rows = append(rows, r) }

	// Append: each engine creates its table in one commit; each run a
	// fresh table, the last one is scanned.
	appendRow := func(name, prefix string, spec Spec) (map[string]string, error) {
		tables := map[string]string{}
		row := &Row{Suite: t.title, Name: name, Unit: "rows"}
		for _, by := range engines {
			o, tr, err := c.run(ctx, by, func() Spec {
				tables[by] = t.uri(prefix + by + "-" + randomID())
				s := spec
				s.Table = tables[by]
				return s
			})
			if err != nil {
				return nil, err
			}
			note := filesNote(o) + "; " + tr.String()
			if by == "lakelog" {
				row.Lakelog, row.LakelogNote = o, note
			} else {
				row.DeltaRS, row.DeltaRSNote = o, "write_deltalake; "+note
			}
		}
		add(row)
		return tables, nil
	}
	tables, err := appendRow(fmt.Sprintf("append %s rows (create table, one commit)", human(float64(n))), "",
		Spec{Op: "append", Rows: n, TargetFileSize: target})
	if err != nil {
		return err
	}
	shapes := []struct {
		what   string
		tables map[string]string
	}{{"", tables}}
	if t.suite == "datapath-s3" {
		// The second shape, on MinIO (the 10M-row suite): few large files.
		spec := largeFiles(n)
		large, err := appendRow(fmt.Sprintf("append %s rows as few large files (%d commits of one file)", human(float64(n)), spec.Commits), "large-", spec)
		if err != nil {
			return err
		}
		shapes = append(shapes, struct {
			what   string
			tables map[string]string
		}{"few large files, ", large})
	}

	for _, shape := range shapes {
		for _, by := range engines {
			for _, q := range scanQueries(n) {
				spec := q.spec
				spec.Table = shape.tables[by]
				name := fmt.Sprintf("%s (%stable written by %s)", q.name, shape.what, by)
				l, lt, err := c.run(ctx, "lakelog", func() Spec { return spec })
				lnote := checkRows(l, q.want) + scanFiles(l) + "; " + lt.String()
				if err != nil {
					lnote = failedNote(err)
				}
				r := &Row{Suite: t.title, Name: name, Unit: "rows", Lakelog: l, LakelogNote: lnote}
				if cfg.deltars != nil {
					var outs []peerOutcome
					for _, m := range peerReaders {
						spec.Method = m.method
						d, dt, err := c.run(ctx, "delta-rs", func() Spec { return spec })
						p := peerOutcome{reader: m.name, o: d, note: checkRows(d, q.want) + scanFiles(d) + "; " + dt.String()}
						if err != nil {
							p.o, p.note = nil, failedNote(err)
						}
						outs = append(outs, p)
					}
					r.DeltaRS, r.DeltaRSNote = fastestPeer(outs)
				}
				add(r)
			}
		}
	}
	return wrongRows(rows)
}

// projection is the two columns the projection rows read.
var projection = []string{"id", "s"}

// expectProjected is the checksum of the projection of rows [0, n): the
// rows and sum(id) of all, the string bytes of s alone ("s%06d", 7 bytes).
func expectProjected(n int64) workload.Checksum {
	c := workload.Expect(0, n)
	c.StrBytes = 7 * n
	return c
}

// failedNote is the note of a scan whose child failed: the last line of
// its error (the child's own message), marked FAILED.
func failedNote(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	msg := strings.TrimSpace(lines[len(lines)-1])
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	progress("FAILED: %v", err)
	return "**FAILED: " + msg + "**"
}

// wrongRows is an error naming the rows marked WRONG or FAILED, nil if
// none is.
func wrongRows(rows []*Row) error {
	var bad []string
	for _, r := range rows {
		if strings.Contains(r.LakelogNote, "**WRONG") || strings.Contains(r.DeltaRSNote, "**WRONG") ||
			strings.Contains(r.LakelogNote, "**FAILED") || strings.Contains(r.DeltaRSNote, "**FAILED") {
			bad = append(bad, fmt.Sprintf("%q", r.Name))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("WRONG or FAILED: %s", strings.Join(bad, ", "))
	}
	return nil
}
