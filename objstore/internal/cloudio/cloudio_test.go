package cloudio

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadBody(t *testing.T) {
	for _, hint := range []int64{-1, 0, 3, 100, 1 << 40} {
		b, err := ReadBody(strings.NewReader("abc"), hint)
		if err != nil || string(b) != "abc" {
			t.Fatalf("hint %d: %q %v", hint, b, err)
		}
	}
}

func TestEmptyRange(t *testing.T) {
	if b, err := EmptyRange("s3", "k", 5, 5); err != nil || b == nil || len(b) != 0 {
		t.Fatalf("at the end: %v %v", b, err)
	}
	if _, err := EmptyRange("s3", "k", 6, 5); !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(err.Error(), "s3: getrange") {
		t.Fatalf("past the end: %v", err)
	}
}
