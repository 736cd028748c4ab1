package actions

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// ParseCommitBytes (the in-memory fast path, with the single-key fast
// decoder) and ParseCommit over a plain reader (the scanner) agree on every
// commit of the corpus and on bad lines.
func TestParseCommitBytesAgrees(t *testing.T) {
	files, _ := filepath.Glob("../../shared/testdata/delta/*/delta/_delta_log/*.json")
	if len(files) == 0 {
		t.Fatal("no corpus commits found")
	}
	inputs := []string{
		"{\"add\":{\"path\":\"a\",\"size\":\"x\"}}\n",
		"{\"add\":{},\"remove\":{}}\n",
		"{\"add\" : { \"path\" : \"a\" } }\n\n{\"future\":{\"x\":1}}",
		"{\"add\":null}",
		"{\"add\":{\"path\":\"a\"}}}",
		"{\"a\\u0064d\":{\"path\":\"a\"}}",
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(b))
	}
	for _, in := range inputs {
		fast, ferr := ParseCommitBytes([]byte(in))
		slow, serr := ParseCommit(bufio.NewReader(strings.NewReader(in)))
		if (ferr == nil) != (serr == nil) || (ferr != nil && ferr.Error() != serr.Error()) {
			t.Fatalf("%q: errors differ: %v vs %v", in, ferr, serr)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%.200q: results differ", in)
		}
	}
}
