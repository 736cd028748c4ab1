package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var (
	spellSeed   = flag.Uint64("spell.seed", 0, "seed of TestPropertySpellingsChangeFeed (0: a fresh one, printed)")
	spellRounds = flag.Int("spell.rounds", 6, "tables TestPropertySpellingsChangeFeed creates")
)

// The boolean table properties, and whether a round may set them true:
// those whose true asks for a feature lakelog does not write (or, for
// appendOnly, forbids the UPDATE) are spelled false.
var booleanProperties = []struct {
	key     string
	canTrue bool
}{
	{"delta.appendOnly", false},
	{"delta.autoOptimize.optimizeWrite", true},
	{"delta.checkpoint.writeStatsAsJson", true},
	{"delta.checkpoint.writeStatsAsStruct", true},
	{"delta.compatibility.symlinkFormatManifest.enabled", true},
	{"delta.enableDeletionVectors", true},
	{"delta.enableExpiredLogCleanup", true},
	{"delta.enableFullRetentionRollback", true},
	{"delta.enableIcebergCompatV1", false},
	{"delta.enableIcebergCompatV2", false},
	{"delta.enableInCommitTimestamps", true},
	{"delta.enableRowTracking", true},
	{"delta.enableTypeWidening", false},
	{"delta.randomizeFilePrefixes", false},
	{"delta.tuneFileSizesForRewrites", true},
}

// TestPropertySpellingsChangeFeed is the reproduction of a wrong change
// feed: a table created with delta.enableChangeDataFeed=tRUE, two rows
// appended, one updated. The feed of the UPDATE must be the pre- and
// post-image of that row only (it once was a delete and an insert of
// every row of the file, because DML read the property as false). Each
// round spells every boolean property at random (any case, keys too, as
// Spark normalises them), the feed's property also by its legacy name
// delta.enableChangeDataCapture, and the first round is the issue's.
func TestPropertySpellingsChangeFeed(t *testing.T) {
	seed := *spellSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (replay: go test ./cmd/lakelog -run TestPropertySpellingsChangeFeed -spell.seed %d)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 21))
	dir := t.TempDir()
	data := writeFile(t, dir, "a.jsonl", "{\"id\": 1, \"v\": \"a\"}\n{\"id\": 2, \"v\": \"b\"}\n")
	for round := range *spellRounds {
		props := []string{"delta.enableChangeDataFeed=tRUE"}
		if round > 0 {
			key := "delta.enableChangeDataFeed"
			if r.IntN(4) == 0 {
				key = "delta.enableChangeDataCapture"
			}
			props = []string{spellKey(r, key) + "=" + spell(r, "true")}
			trues := map[string]bool{}
			for _, p := range booleanProperties {
				v := "false"
				if p.canTrue && r.IntN(2) == 0 {
					v = "true"
				}
				trues[p.key] = v == "true"
				props = append(props, spellKey(r, p.key)+"="+spell(r, v))
			}
			if trues["delta.compatibility.symlinkFormatManifest.enabled"] && trues["delta.enableDeletionVectors"] {
				// Spark refuses the two together (a manifest's readers
				// would read deleted rows); keep the manifest off.
				for i, p := range props {
					if strings.EqualFold(strings.SplitN(p, "=", 2)[0], "delta.compatibility.symlinkFormatManifest.enabled") {
						props[i] = spellKey(r, "delta.compatibility.symlinkFormatManifest.enabled") + "=" + spell(r, "false")
					}
				}
			}
			r.Shuffle(len(props), func(i, j int) { props[i], props[j] = props[j], props[i] })
		}
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			table := filepath.Join(dir, fmt.Sprintf("t%d", round))
			args := []string{"create", table, "--schema", "id long not null, v string"}
			for _, p := range props {
				args = append(args, "--property", p)
			}
			ok(t, args...)
			ok(t, "append", table, data)
			ok(t, "update", table, "--set", "v = 'z'", "--where", "id = 1")
			out := ok(t, "changes", table, "--from", "0", "--format", "jsonl", "--sorted")
			var got []string
			for _, l := range lines(out) {
				var row map[string]any
				if err := json.Unmarshal([]byte(l), &row); err != nil {
					t.Fatalf("changes line %q: %v", l, err)
				}
				got = append(got, fmt.Sprintf("%v %v %v %v", row["_commit_version"], row["_change_type"], row["id"], row["v"]))
			}
			slices.Sort(got)
			want := []string{"1 insert 1 a", "1 insert 2 b", "2 update_postimage 1 z", "2 update_preimage 1 a"}
			if !slices.Equal(got, want) {
				t.Fatalf("properties %v:\nfeed\n\t%s\nwant\n\t%s", props, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
			}
		})
	}
}

// spell writes "true" or "false" in a random case.
func spell(r *rand.Rand, v string) string {
	b := []byte(v)
	for i := range b {
		if r.IntN(2) == 0 {
			b[i] = b[i] - 'a' + 'A'
		}
	}
	return string(b)
}

// spellKey writes a property key in a random case half of the time.
func spellKey(r *rand.Rand, key string) string {
	if r.IntN(2) == 0 {
		return key
	}
	b := []byte(key)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z' && r.IntN(2) == 0:
			b[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z' && r.IntN(2) == 0:
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}
