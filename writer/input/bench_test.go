package input_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/writer/input"
)

// BenchmarkDecode decodes 10,000 order rows per iteration.
func BenchmarkDecode(b *testing.B) {
	schema := mustDDL(b, "id long not null, customer string, amount decimal(10,2), country string, ts timestamp")
	var jl, cs strings.Builder
	cs.WriteString("id,customer,amount,country,ts\n")
	for i := range 10_000 {
		fmt.Fprintf(&jl, `{"id":%d,"customer":"c-%d","amount":"%d.%02d","country":"nl","ts":"2026-03-01T10:%02d:00Z"}`+"\n", i, i%1000, i, i%100, i%60)
		fmt.Fprintf(&cs, "%d,c-%d,%d.%02d,nl,2026-03-01T10:%02d:00Z\n", i, i%1000, i, i%100, i%60)
	}
	for _, c := range []struct{ name, data string }{{"jsonl", jl.String()}, {"csv", cs.String()}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				d, err := input.NewDecoder(bytes.NewReader([]byte(c.data)), "x."+c.name, schema)
				if err != nil {
					b.Fatal(err)
				}
				for _, err := range d.Records(context.Background()) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
