package objstoretest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lakelog/lakelog/objstore"
)

// Option changes how [Run] tests a store.
type Option func(*config)

type config struct {
	raceRounds  int
	raceWriters int
	cancel      bool
}

// WithRaceRounds sets how many rounds of the create-if-absent race run, each
// on a fresh key; the default is 200. Lower it only for a slow store whose
// developer chose to, never to make a failing store pass.
func WithRaceRounds(n int) Option { return func(c *config) { c.raceRounds = max(n, 1) } }

// WithRaceWriters sets how many goroutines race in each round; the default
// is 32.
func WithRaceWriters(n int) Option { return func(c *config) { c.raceWriters = max(n, 2) } }

// SkipCancellation skips the checks that calls with a cancelled context
// fail, for a store that cannot observe its context.
func SkipCancellation() Option { return func(c *config) { c.cancel = false } }

// Run tests the store newStore makes against the [objstore.Store] contract,
// in subtests. newStore is called once per subtest and must return an empty
// store; it may register cleanups on the t it is given.
func Run(t *testing.T, newStore func(t *testing.T) objstore.Store, opts ...Option) {
	cfg := config{raceRounds: 200, raceWriters: 32, cancel: true}
	for _, o := range opts {
		o(&cfg)
	}
	tests := []struct {
		name string
		run  func(t *testing.T, s objstore.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"PutCopiesBody", testPutCopiesBody},
		{"Overwrite", testOverwrite},
		{"IfAbsent", testIfAbsent},
		{"NotFound", testNotFound},
		{"GetRange", testGetRange},
		{"Head", testHead},
		{"Delete", testDelete},
		{"ListOrder", testListOrder},
		{"ListPrefixStartAfter", testListPrefixStartAfter},
		{"ListEarlyBreak", testListEarlyBreak},
		{"ListCallsStoreInLoop", testListCallsStoreInLoop},
		{"WeirdKeys", testWeirdKeys},
		{"DeleteKeys", testDeleteKeys},
		{"ListRanges", testListRanges},
		{"FailedBodyWritesNothing", testFailedBody},
		{"Writer", testWriter},
		{"ConcurrentPuts", testConcurrentPuts},
		{"OverwriteIsAtomic", testOverwriteAtomic},
		{"CreateIfAbsentRace", func(t *testing.T, s objstore.Store) { testRace(t, s, cfg) }},
	}
	if cfg.cancel {
		tests = append(tests, struct {
			name string
			run  func(t *testing.T, s objstore.Store)
		}{"Cancelled", testCancelled})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			if s == nil {
				t.Fatal("newStore returned nil")
			}
			tc.run(t, s)
		})
	}
}

// put stores body under key or fails the test.
func put(t *testing.T, s objstore.Store, key string, body []byte) {
	t.Helper()
	err := s.Put(t.Context(), key, bytes.NewReader(body), objstore.PutOptions{Size: int64(len(body))})
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

// wantBody fails the test unless key holds want.
func wantBody(t *testing.T, s objstore.Store, key string, want []byte) {
	t.Helper()
	got, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Get(%q) = %s, want %s", key, show(got), show(want))
	}
}

// wantMissing fails the test unless Get, GetRange and Head of key say
// ErrNotFound.
func wantMissing(t *testing.T, s objstore.Store, key string) {
	t.Helper()
	ctx := t.Context()
	if b, err := s.Get(ctx, key); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Get(%q) = %s, %v; want ErrNotFound", key, show(b), err)
	}
	if b, err := s.GetRange(ctx, key, 0, 1); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("GetRange(%q, 0, 1) = %s, %v; want ErrNotFound", key, show(b), err)
	}
	if info, err := s.Head(ctx, key); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Head(%q) = %+v, %v; want ErrNotFound", key, info, err)
	}
}

// list collects a listing or fails the test.
func list(t *testing.T, s objstore.Store, prefix, startAfter string) []objstore.ObjectInfo {
	t.Helper()
	var infos []objstore.ObjectInfo
	for info, err := range s.List(t.Context(), prefix, startAfter) {
		if err != nil {
			t.Fatalf("List(%q, %q): %v", prefix, startAfter, err)
		}
		infos = append(infos, info)
	}
	return infos
}

func keysOf(infos []objstore.ObjectInfo) []string {
	keys := make([]string, len(infos))
	for i, info := range infos {
		keys[i] = info.Key
	}
	return keys
}

// show prints a body briefly.
func show(b []byte) string {
	if b == nil {
		return "nil"
	}
	if len(b) > 40 {
		return fmt.Sprintf("%q... (%d bytes)", b[:40], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// randomBytes returns n bytes that are the same on every run.
func randomBytes(n int, seed uint64) []byte {
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24)})
	b := make([]byte, n)
	r.Read(b)
	return b
}

func testRoundTrip(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	bodies := map[string][]byte{
		"empty.json":         {},
		"small.json":         []byte(`{"commitInfo":{}}` + "\n"),
		"dir/sub/nested.bin": randomBytes(1000, 1),
		"big/part-0.parquet": randomBytes(1<<20+17, 2),
		"one-byte":           {0},
		"_delta_log/00.json": []byte("x"),
		"binary/all-the-bytes": func() []byte {
			b := make([]byte, 256)
			for i := range b {
				b[i] = byte(i)
			}
			return b
		}(),
	}
	for key, body := range bodies {
		put(t, s, key, body)
	}
	// A reader of length zero that is not a bytes.Reader, and no Size hint.
	if err := s.Put(ctx, "empty-nosize", strings.NewReader(""), objstore.PutOptions{}); err != nil {
		t.Fatalf("Put(empty-nosize): %v", err)
	}
	bodies["empty-nosize"] = []byte{}
	// A body that arrives in small pieces, with no Size hint.
	big := randomBytes(300_000, 3)
	if err := s.Put(ctx, "trickle", io.MultiReader(bytes.NewReader(big[:1]), &slowReader{big[1:]}), objstore.PutOptions{}); err != nil {
		t.Fatalf("Put(trickle): %v", err)
	}
	bodies["trickle"] = big

	for key, body := range bodies {
		wantBody(t, s, key, body)
		info, err := s.Head(ctx, key)
		if err != nil {
			t.Fatalf("Head(%q): %v", key, err)
		}
		if info.Size != int64(len(body)) {
			t.Errorf("Head(%q).Size = %d, want %d", key, info.Size, len(body))
		}
	}
	for _, info := range list(t, s, "", "") {
		body, ok := bodies[info.Key]
		if !ok {
			t.Errorf("List yielded %q, which was never put", info.Key)
			continue
		}
		if info.Size != int64(len(body)) {
			t.Errorf("List: %q has Size %d, want %d", info.Key, info.Size, len(body))
		}
		delete(bodies, info.Key)
	}
	for key := range bodies {
		t.Errorf("List did not yield %q", key)
	}
}

// slowReader returns at most 7 bytes per Read.
type slowReader struct{ b []byte }

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 7)], r.b)
	r.b = r.b[n:]
	return n, nil
}

func testPutCopiesBody(t *testing.T, s objstore.Store) {
	body := []byte("original")
	put(t, s, "k", body)
	copy(body, "XXXXXXXX")
	wantBody(t, s, "k", []byte("original"))

	got, err := s.Get(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	copy(got, "YYYYYYYY")
	wantBody(t, s, "k", []byte("original"))

	r, err := s.GetRange(t.Context(), "k", 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	copy(r, "ZZZZ")
	wantBody(t, s, "k", []byte("original"))
}

func testOverwrite(t *testing.T, s objstore.Store) {
	put(t, s, "k", []byte("first version, longer"))
	put(t, s, "k", []byte("second"))
	wantBody(t, s, "k", []byte("second"))
	info, err := s.Head(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != 6 {
		t.Errorf("Head after overwrite: Size = %d, want 6", info.Size)
	}
	if got := keysOf(list(t, s, "", "")); !slices.Equal(got, []string{"k"}) {
		t.Errorf("List after overwrite = %q, want [k]", got)
	}
}

func testIfAbsent(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	ifAbsent := objstore.PutOptions{IfAbsent: true}
	if err := s.Put(ctx, "_delta_log/00000000000000000000.json", strings.NewReader("v0"), ifAbsent); err != nil {
		t.Fatalf("IfAbsent Put of a new key: %v", err)
	}
	wantBody(t, s, "_delta_log/00000000000000000000.json", []byte("v0"))

	err := s.Put(ctx, "_delta_log/00000000000000000000.json", strings.NewReader("other writer"), ifAbsent)
	if !errors.Is(err, objstore.ErrExists) {
		t.Fatalf("IfAbsent Put of an existing key = %v, want ErrExists", err)
	}
	wantBody(t, s, "_delta_log/00000000000000000000.json", []byte("v0"))

	// The same body does not make it succeed either.
	err = s.Put(ctx, "_delta_log/00000000000000000000.json", strings.NewReader("v0"), ifAbsent)
	if !errors.Is(err, objstore.ErrExists) {
		t.Fatalf("IfAbsent Put of an existing key with the same body = %v, want ErrExists", err)
	}

	// An empty object exists too.
	put(t, s, "empty", nil)
	if err := s.Put(ctx, "empty", strings.NewReader("x"), ifAbsent); !errors.Is(err, objstore.ErrExists) {
		t.Fatalf("IfAbsent Put over an empty object = %v, want ErrExists", err)
	}
	wantBody(t, s, "empty", []byte{})

	// After a delete the key is free again.
	if err := s.Delete(ctx, "empty"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "empty", strings.NewReader("y"), ifAbsent); err != nil {
		t.Fatalf("IfAbsent Put after Delete: %v", err)
	}
	wantBody(t, s, "empty", []byte("y"))

	// A plain Put still overwrites.
	put(t, s, "_delta_log/00000000000000000000.json", []byte("v0'"))
	wantBody(t, s, "_delta_log/00000000000000000000.json", []byte("v0'"))
}

func testNotFound(t *testing.T, s objstore.Store) {
	wantMissing(t, s, "nothing")
	put(t, s, "dir/x", []byte("x"))
	put(t, s, "file", []byte("f"))
	wantMissing(t, s, "dir/y")
	wantMissing(t, s, "dir")      // a "folder" is not an object
	wantMissing(t, s, "file/x")   // nor is anything "under" an object
	wantMissing(t, s, "dir/x/y")  // ...at any depth
	wantMissing(t, s, "di")       // nor a prefix of a key
	wantMissing(t, s, "dir/x.gz") // nor a key extended
}

// testGetRange checks GetRange and GetRangeInto (objstore.RangeReader;
// the GetRange fallback of objstore.GetRangeInto for a store without
// one) alike: the bytes asked for, fewer only at the end,
// io.ErrUnexpectedEOF past it, and GetRangeInto writes nothing past its
// count.
func testGetRange(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	put(t, s, "digits", []byte("0123456789"))
	put(t, s, "empty", nil)
	big := randomBytes(1<<20+17, 4)
	put(t, s, "big", big)
	getRange := map[string]func(key string, off, n int64) ([]byte, error){
		"GetRange": func(key string, off, n int64) ([]byte, error) { return s.GetRange(ctx, key, off, n) },
		"GetRangeInto": func(key string, off, n int64) ([]byte, error) {
			p := bytes.Repeat([]byte{'#'}, int(n)+8)
			var k int
			var err error
			if r, ok := s.(objstore.RangeReader); ok {
				k, err = r.GetRangeInto(ctx, key, off, p[:n])
			} else {
				k, err = objstore.GetRangeInto(ctx, s, key, off, p[:n])
			}
			if rest := p[n:]; err == nil && !bytes.Equal(rest, bytes.Repeat([]byte{'#'}, len(rest))) {
				return nil, fmt.Errorf("wrote past its buffer: %q", rest)
			}
			return p[:k], err
		},
	}
	cases := []struct {
		key    string
		off, n int64
		want   string
	}{
		{"digits", 0, 10, "0123456789"},
		{"digits", 2, 3, "234"},
		{"digits", 0, 1, "0"},
		{"digits", 9, 1, "9"},
		{"digits", 7, 100, "789"}, // past the end: what there is
		{"digits", 0, 1000, "0123456789"},
		{"digits", 10, 5, ""}, // at the end: nothing
		{"digits", 4, 0, ""},
		{"empty", 0, 10, ""},
	}
	for name, get := range getRange {
		for _, c := range cases {
			got, err := get(c.key, c.off, c.n)
			if err != nil {
				t.Errorf("%s(%q, %d, %d): %v", name, c.key, c.off, c.n, err)
				continue
			}
			if string(got) != c.want {
				t.Errorf("%s(%q, %d, %d) = %q, want %q", name, c.key, c.off, c.n, got, c.want)
			}
		}
		for _, off := range []int64{11, 1000} {
			if got, err := get("digits", off, 1); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s(digits, %d, 1) = %q, %v; want io.ErrUnexpectedEOF", name, off, got, err)
			}
		}
		if got, err := get("empty", 1, 1); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s(empty, 1, 1) = %q, %v; want io.ErrUnexpectedEOF", name, got, err)
		}
		for _, r := range [][2]int64{{0, 1 << 20}, {12345, 600_000}, {1 << 20, 17}, {1<<20 + 10, 100}} {
			got, err := get("big", r[0], r[1])
			if err != nil {
				t.Fatalf("%s(big, %d, %d): %v", name, r[0], r[1], err)
			}
			want := big[r[0]:min(r[0]+r[1], int64(len(big)))]
			if !bytes.Equal(got, want) {
				t.Errorf("%s(big, %d, %d) returned %d bytes that differ from the %d expected", name, r[0], r[1], len(got), len(want))
			}
		}
	}
}

func testHead(t *testing.T, s objstore.Store) {
	put(t, s, "a/b.json", []byte("12345"))
	put(t, s, "a/empty", nil)
	for key, size := range map[string]int64{"a/b.json": 5, "a/empty": 0} {
		info, err := s.Head(t.Context(), key)
		if err != nil {
			t.Fatalf("Head(%q): %v", key, err)
		}
		if info.Key != key || info.Size != size || info.ModTime.IsZero() {
			t.Errorf("Head(%q) = %+v, want Key %q, Size %d and a ModTime", key, info, key, size)
		}
	}
	for _, info := range list(t, s, "a/", "") {
		if info.ModTime.IsZero() {
			t.Errorf("List: %q has no ModTime", info.Key)
		}
	}
}

func testDelete(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	if err := s.Delete(ctx, "never/was"); err != nil {
		t.Fatalf("Delete of a missing key: %v", err)
	}
	put(t, s, "a/b", []byte("b"))
	put(t, s, "a/c", []byte("c"))
	put(t, s, "a/d/e", []byte("e"))
	if err := s.Delete(ctx, "a/b"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantMissing(t, s, "a/b")
	if err := s.Delete(ctx, "a/b"); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if err := s.Delete(ctx, "a"); err != nil { // a "folder": nothing to delete
		t.Fatalf("Delete of a folder-like prefix: %v", err)
	}
	if err := s.Delete(ctx, "a/d"); err != nil {
		t.Fatalf("Delete of a folder-like prefix: %v", err)
	}
	wantBody(t, s, "a/c", []byte("c"))
	wantBody(t, s, "a/d/e", []byte("e"))
	if got := keysOf(list(t, s, "", "")); !slices.Equal(got, []string{"a/c", "a/d/e"}) {
		t.Errorf("List after Delete = %q, want [a/c a/d/e]", got)
	}
	if err := s.Delete(ctx, "a/d/e"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "a/c"); err != nil {
		t.Fatal(err)
	}
	if got := list(t, s, "", ""); len(got) != 0 {
		t.Errorf("List after deleting everything = %q, want nothing", keysOf(got))
	}
}

// orderKeys are keys whose byte order differs from a folder walk's order
// and from any case-folding or unicode-aware order.
var orderKeys = []string{
	"A",
	"Z/z",
	"_delta_log/00000000000000000000.json",
	"_delta_log/00000000000000000001.json",
	"_delta_log/00000000000000000002.checkpoint.parquet",
	"_delta_log/00000000000000000002.json",
	"_delta_log/00000000000000000010.json",
	"_delta_log/_last_checkpoint",
	"_delta_log/_sidecars/0a.parquet",
	"a b",
	"a%20b",
	"a+b",
	"a-b",
	"a.b",
	"a/b",
	"a/b.c",
	"a/b0",
	"a/c/d",
	"a/c/d.e",
	"a/c/e",
	"a/c.d",
	"a0",
	"a:b",
	"a=1/x",
	"a=1/y",
	"a=10/x",
	"a=2/x",
	"aa",
	"b",
	"z",
	"é",
	"日本/語",
	"😀",
}

func putAll(t *testing.T, s objstore.Store, keys []string) {
	t.Helper()
	shuffled := slices.Clone(keys)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) {
		shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
	})
	for _, k := range shuffled {
		put(t, s, k, []byte(k))
	}
}

func testListOrder(t *testing.T, s objstore.Store) {
	putAll(t, s, orderKeys)
	want := slices.Clone(orderKeys)
	slices.Sort(want) // Go compares strings byte by byte
	infos := list(t, s, "", "")
	if got := keysOf(infos); !slices.Equal(got, want) {
		t.Fatalf("List order:\n got %q\nwant %q", got, want)
	}
	for _, info := range infos {
		if info.Size != int64(len(info.Key)) {
			t.Errorf("List: %q has Size %d, want %d", info.Key, info.Size, len(info.Key))
		}
	}
}

func testListPrefixStartAfter(t *testing.T, s objstore.Store) {
	putAll(t, s, orderKeys)
	sorted := slices.Clone(orderKeys)
	slices.Sort(sorted)
	prefixes := []string{
		"", "a", "a/", "a/c", "a/c/", "a.", "a/b", "a=1", "a=1/", "_delta_log/",
		"_delta_log/0000000000000000000", "_delta_log/_", "_delta_log/_sidecars/",
		"Z", "b", "zzz", "nothing/", "日本/", "😀",
	}
	startAfters := []string{
		"", "a", "a/", "a/b", "a/b0", "a/bz", "a/c", "a/c/d", "a.b", "a.c", "a0", "a=1/x",
		"_delta_log/", "_delta_log/00000000000000000001.json",
		"_delta_log/00000000000000000001.json.tmp", "_delta_log/00000000000000000002",
		"_delta_log/_last_checkpoint", "Z", "b", "é", "\xff",
	}
	for _, prefix := range prefixes {
		for _, after := range startAfters {
			var want []string
			for _, k := range sorted {
				if strings.HasPrefix(k, prefix) && k > after {
					want = append(want, k)
				}
			}
			if got := keysOf(list(t, s, prefix, after)); !slices.Equal(got, want) {
				t.Errorf("List(%q, %q):\n got %q\nwant %q", prefix, after, got, want)
			}
		}
	}
	// Paging through the log by startAfter visits every key once.
	var paged []string
	after := ""
	for {
		page := keysOf(list(t, s, "_delta_log/", after))
		if len(page) == 0 {
			break
		}
		paged = append(paged, page[0])
		after = page[0]
	}
	want := keysOf(list(t, s, "_delta_log/", ""))
	if !slices.Equal(paged, want) || len(want) != 7 {
		t.Errorf("paging by startAfter = %q, want %q (7 keys)", paged, want)
	}
}

func testListEarlyBreak(t *testing.T, s objstore.Store) {
	putAll(t, s, orderKeys)
	sorted := slices.Clone(orderKeys)
	slices.Sort(sorted)
	for _, n := range []int{1, 2, 5, 15, len(sorted) - 1} {
		var got []string
		for info, err := range s.List(t.Context(), "", "") {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, info.Key)
			if len(got) == n {
				break
			}
		}
		if !slices.Equal(got, sorted[:n]) {
			t.Errorf("List stopped after %d: got %q, want %q", n, got, sorted[:n])
		}
	}
	// A listing that yields nothing and one broken at once are both fine.
	for range s.List(t.Context(), "nothing/", "") {
		t.Error("List of a missing prefix yielded something")
	}
	for range s.List(t.Context(), "", "") {
		break
	}
}

func testListCallsStoreInLoop(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	keys := []string{"l/1", "l/2", "l/3", "l/4"}
	putAll(t, s, keys)
	seen := 0
	for info, err := range s.List(ctx, "l/", "") {
		if err != nil {
			t.Fatal(err)
		}
		seen++
		wantBody(t, s, info.Key, []byte(info.Key))
		// Writing and deleting while listing must not deadlock or fail.
		put(t, s, "m/"+info.Key, []byte("copy"))
		if err := s.Delete(ctx, info.Key); err != nil {
			t.Fatal(err)
		}
	}
	if seen != len(keys) {
		t.Errorf("List yielded %d keys while the loop deleted them, want %d", seen, len(keys))
	}
	if got := keysOf(list(t, s, "", "")); len(got) != len(keys) || !strings.HasPrefix(got[0], "m/") {
		t.Errorf("after the loop List = %q, want the 4 m/ copies", got)
	}
}

// weirdKeys are keys a Delta table can have: partition values with spaces,
// escapes and punctuation, unicode and emoji.
var weirdKeys = []string{
	"with space/a b.parquet",
	"pct/%41%2F%25.json",
	"eq/k=v/part-00000.parquet",
	"colon/2024-01-02 03:04:05/x",
	"colon/a:b",
	"plus/a+b",
	"hash/#1",
	"question/a?b=c&d",
	"quote/it's \"quoted\"",
	"brackets/[x]{y}(z)",
	"tilde/~x!y@z$",
	"comma/a,b;c",
	"dots/a..b/...c",
	"unicode/日本語/über/ñ",
	"emoji/😀/🦆.json",
	"long/" + strings.Repeat("x", 200),
	"nbsp/a\u00a0b",
}

func testWeirdKeys(t *testing.T, s objstore.Store) {
	for _, k := range weirdKeys {
		put(t, s, k, []byte(k))
	}
	for _, k := range weirdKeys {
		wantBody(t, s, k, []byte(k))
		info, err := s.Head(t.Context(), k)
		if err != nil {
			t.Errorf("Head(%q): %v", k, err)
		} else if info.Key != k || info.Size != int64(len(k)) {
			t.Errorf("Head(%q) = %+v", k, info)
		}
		if got := keysOf(list(t, s, k, "")); !slices.Equal(got, []string{k}) {
			t.Errorf("List(%q) = %q, want just that key", k, got)
		}
	}
	want := slices.Clone(weirdKeys)
	slices.Sort(want)
	if got := keysOf(list(t, s, "", "")); !slices.Equal(got, want) {
		t.Errorf("List of weird keys:\n got %q\nwant %q", got, want)
	}
	for _, k := range weirdKeys {
		if err := s.Delete(t.Context(), k); err != nil {
			t.Errorf("Delete(%q): %v", k, err)
		}
		wantMissing(t, s, k)
	}
}

// testDeleteKeys deletes keys in batches (through DeleteBatch when the
// store has it, more keys than one batch takes), missing and weird keys
// among them, and checks that exactly those keys are gone.
func testDeleteKeys(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	n := 7
	if bd, ok := s.(objstore.BatchDeleter); ok {
		if err := bd.DeleteBatch(ctx, []string{"never/was", "nor/this"}); err != nil {
			t.Fatalf("DeleteBatch of missing keys: %v", err)
		}
		n = min(bd.MaxDeleteBatch(), 120) + 5
	}
	var doomed []string
	for i := range n {
		doomed = append(doomed, fmt.Sprintf("d/%04d", i))
	}
	doomed = append(doomed, weirdKeys...)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, k := range append(slices.Clone(doomed), "keep/1", "d/keep") {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			put(t, s, k, []byte(k))
		}()
	}
	wg.Wait()
	calls := 0
	deleted, err := objstore.DeleteKeys(ctx, s, append(doomed, "d/missing"), objstore.DeleteOptions{
		Concurrency: 3,
		Progress:    func(int) { calls++ },
	})
	if err != nil {
		t.Fatalf("DeleteKeys: %v", err)
	}
	if deleted != len(doomed)+1 || calls == 0 {
		t.Errorf("DeleteKeys deleted %d (progress called %d times), want %d", deleted, calls, len(doomed)+1)
	}
	if got := keysOf(list(t, s, "", "")); !slices.Equal(got, []string{"d/keep", "keep/1"}) {
		t.Errorf("List after DeleteKeys = %q, want [d/keep keep/1]", got)
	}
	for _, k := range doomed[:3] {
		wantMissing(t, s, k)
	}
}

// testListRanges lists in ranges cut at random places and checks that
// the listing is List's.
func testListRanges(t *testing.T, s objstore.Store) {
	var keys []string
	for i := range 40 {
		keys = append(keys, fmt.Sprintf("r/%c/%02d", 'a'+i%5, i))
	}
	keys = append(keys, "other", "r/é", "q")
	for _, k := range keys {
		put(t, s, k, []byte(k))
	}
	want := keysOf(list(t, s, "r/", ""))
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 6 {
		var splits []string
		for range round * 3 {
			switch rng.IntN(3) {
			case 0:
				splits = append(splits, keys[rng.IntN(len(keys))])
			case 1:
				splits = append(splits, fmt.Sprintf("r/%c", 'a'+rng.IntN(6)))
			default:
				splits = append(splits, "zz")
			}
		}
		var got []string
		for o, err := range objstore.ListRanges(t.Context(), s, "r/", splits, 1+round) {
			if err != nil {
				t.Fatalf("ListRanges: %v", err)
			}
			got = append(got, o.Key)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("ListRanges(r/, %q) =\n%q\nwant List's\n%q", splits, got, want)
		}
	}
}

// failingReader yields some bytes and then an error.
type failingReader struct {
	n   int
	err error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, r.err
	}
	n := min(len(p), r.n)
	for i := range n {
		p[i] = 'x'
	}
	r.n -= n
	return n, nil
}

var errBody = errors.New("objstoretest: body failed")

func testFailedBody(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	put(t, s, "existing", []byte("original"))
	for _, ifAbsent := range []bool{false, true} {
		for _, key := range []string{"new", "existing"} {
			err := s.Put(ctx, key, &failingReader{n: 100_000, err: errBody}, objstore.PutOptions{IfAbsent: ifAbsent})
			if err == nil {
				t.Fatalf("Put(%q, IfAbsent %v) with a failing body succeeded", key, ifAbsent)
			}
		}
		wantMissing(t, s, "new")
		wantBody(t, s, "existing", []byte("original"))
	}
	if got := keysOf(list(t, s, "", "")); !slices.Equal(got, []string{"existing"}) {
		t.Errorf("List after failed puts = %q, want [existing]", got)
	}
}

// testWriter: objstore.NewWriter streams an object written in uneven
// pieces (larger than a write buffer and than small part sizes), shows
// nothing until Close, leaves nothing after Abort or a cancelled context,
// and with IfAbsent fails at Close on an existing key.
func testWriter(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	body := randomBytes(3<<20+12345, 7)
	write := func(w objstore.Writer, b []byte) error {
		for i, off := 0, 0; off < len(b); i++ {
			n := min(len(b)-off, []int{1, 100, 70_000, 1 << 20}[i%4])
			if _, err := w.Write(b[off : off+n]); err != nil {
				return err
			}
			off += n
		}
		return nil
	}
	w, err := objstore.NewWriter(ctx, s, "streamed/a.bin", objstore.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := write(w, body[:1<<20]); err != nil {
		t.Fatal(err)
	}
	wantMissing(t, s, "streamed/a.bin") // not before Close
	if err := write(w, body[1<<20:]); err != nil {
		t.Fatal(err)
	}
	if w.Written() != int64(len(body)) {
		t.Errorf("Written() = %d, want %d", w.Written(), len(body))
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	w.Abort() // after a successful Close: nothing happens
	wantBody(t, s, "streamed/a.bin", body)

	// Abort part way: nothing appears.
	w, err = objstore.NewWriter(ctx, s, "streamed/aborted.bin", objstore.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := write(w, body[:2<<20]); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if err := w.Close(); err == nil {
		t.Error("Close after Abort succeeded")
	}
	wantMissing(t, s, "streamed/aborted.bin")

	// A cancelled context: Write or Close fails, nothing appears.
	cctx, cancel := context.WithCancel(ctx)
	w, err = objstore.NewWriter(cctx, s, "streamed/cancelled.bin", objstore.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := write(w, body[:1<<20]); err != nil {
		t.Fatal(err)
	}
	cancel()
	werr := write(w, body[1<<20:])
	if cerr := w.Close(); werr == nil && cerr == nil {
		t.Error("a writer whose context was cancelled closed without error")
	}
	wantMissing(t, s, "streamed/cancelled.bin")

	// IfAbsent on an existing key: Close fails with ErrExists, the object
	// keeps its bytes.
	put(t, s, "streamed/existing", []byte("original"))
	w, err = objstore.NewWriter(ctx, s, "streamed/existing", objstore.PutOptions{IfAbsent: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := write(w, []byte("replacement")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, objstore.ErrExists) {
		t.Errorf("Close with IfAbsent on an existing key: %v, want ErrExists", err)
	}
	wantBody(t, s, "streamed/existing", []byte("original"))
	if got := keysOf(list(t, s, "streamed/", "")); !slices.Equal(got, []string{"streamed/a.bin", "streamed/existing"}) {
		t.Errorf("List after the writers = %q", got)
	}
}

func testConcurrentPuts(t *testing.T, s objstore.Store) {
	const writers, perWriter = 8, 16
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				key := fmt.Sprintf("part=%d/file-%03d.parquet", w, i)
				if err := s.Put(t.Context(), key, strings.NewReader(key), objstore.PutOptions{IfAbsent: i%2 == 0}); err != nil {
					errs <- fmt.Errorf("Put(%q): %w", key, err)
				}
				for _, err := range s.List(t.Context(), fmt.Sprintf("part=%d/", w), "") {
					if err != nil {
						errs <- fmt.Errorf("List: %w", err)
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	infos := list(t, s, "", "")
	if len(infos) != writers*perWriter {
		t.Fatalf("List after concurrent puts: %d keys, want %d", len(infos), writers*perWriter)
	}
	for _, info := range infos {
		wantBody(t, s, info.Key, []byte(info.Key))
	}
}

func testOverwriteAtomic(t *testing.T, s objstore.Store) {
	const size = 64 << 10
	bodies := [2][]byte{bytes.Repeat([]byte{'a'}, size), bytes.Repeat([]byte{'b'}, size)}
	put(t, s, "k", bodies[0])
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	bad := make(chan string, 8)
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				got, err := s.Get(ctx, "k")
				if err != nil {
					if ctx.Err() == nil {
						bad <- fmt.Sprintf("Get during overwrites: %v", err)
					}
					return
				}
				if !bytes.Equal(got, bodies[0]) && !bytes.Equal(got, bodies[1]) {
					bad <- fmt.Sprintf("Get during overwrites saw a partial object: %s", show(got))
					return
				}
			}
		})
	}
	for i := range 50 {
		put(t, s, "k", bodies[i%2])
	}
	cancel()
	wg.Wait()
	close(bad)
	for msg := range bad {
		t.Error(msg)
	}
}

func testRace(t *testing.T, s objstore.Store, cfg config) {
	ctx := t.Context()
	for round := range cfg.raceRounds {
		key := fmt.Sprintf("race/%04d/_delta_log/%020d.json", round, round)
		bodyOf := func(w int) []byte {
			// Distinct bodies of different lengths, so a torn or mixed
			// write cannot pass for a winner's.
			return fmt.Appendf(nil, "round %d writer %d %s", round, w, strings.Repeat("=", w*37))
		}
		errs := make([]error, cfg.raceWriters)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range cfg.raceWriters {
			wg.Go(func() {
				body := bodyOf(w)
				<-start
				errs[w] = s.Put(ctx, key, bytes.NewReader(body), objstore.PutOptions{IfAbsent: true, Size: int64(len(body))})
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("round %d: writers %d and %d both won the IfAbsent Put of %q", round, winner, w, key)
			case err == nil:
				winner = w
			case !errors.Is(err, objstore.ErrExists):
				t.Errorf("round %d: writer %d: %v, want nil or ErrExists", round, w, err)
			}
		}
		if winner < 0 {
			t.Errorf("round %d: no writer won the IfAbsent Put of %q", round, key)
		} else {
			wantBody(t, s, key, bodyOf(winner))
		}
		if t.Failed() {
			return
		}
	}
}

func testCancelled(t *testing.T, s objstore.Store) {
	put(t, s, "k", []byte("v"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want context.Canceled", what, err)
		}
	}
	_, err := s.Get(ctx, "k")
	check("Get", err)
	_, err = s.GetRange(ctx, "k", 0, 1)
	check("GetRange", err)
	_, err = s.Head(ctx, "k")
	check("Head", err)
	check("Put", s.Put(ctx, "new", strings.NewReader("x"), objstore.PutOptions{}))
	check("Put IfAbsent", s.Put(ctx, "new2", strings.NewReader("x"), objstore.PutOptions{IfAbsent: true}))
	check("Delete", s.Delete(ctx, "k"))
	var listErr error
	n := 0
	for _, err := range s.List(ctx, "", "") {
		n++
		if err != nil {
			listErr = err
		}
	}
	check("List", listErr)
	if n != 1 {
		t.Errorf("List with a cancelled context yielded %d times, want just the error", n)
	}
	wantMissing(t, s, "new")
	wantMissing(t, s, "new2")
	wantBody(t, s, "k", []byte("v"))

	// A context cancelled while the body is read stops the Put and writes
	// nothing.
	ctx, cancel = context.WithCancel(t.Context())
	body := &cancellingReader{r: &failingReader{n: 1 << 20, err: io.EOF}, after: 1 << 16, cancel: cancel}
	if err := s.Put(ctx, "slow", body, objstore.PutOptions{}); err == nil {
		t.Error("Put whose context was cancelled during the upload succeeded")
	}
	wantMissing(t, s, "slow")
}

// cancellingReader cancels its context after some bytes have been read.
type cancellingReader struct {
	r      io.Reader
	after  int
	cancel context.CancelFunc
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	if c.after <= 0 {
		c.cancel()
	}
	n, err := c.r.Read(p[:min(len(p), 4096)])
	c.after -= n
	return n, err
}
