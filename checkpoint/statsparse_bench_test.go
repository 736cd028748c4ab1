package checkpoint

import (
	"fmt"
	"testing"

	"github.com/lakelog/lakelog/actions"
)

// BenchmarkStatsJSON reads Spark-style add.stats of three columns into
// typed columns, as a checkpoint's adds are read.
func BenchmarkStatsJSON(b *testing.B) {
	md := &actions.Metadata{
		SchemaString:     `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"p","type":"string","nullable":true,"metadata":{}},{"name":"v","type":"double","nullable":true,"metadata":{}},{"name":"s","type":"string","nullable":true,"metadata":{}}]}`,
		PartitionColumns: []string{"p"},
	}
	l, err := NewFileLayout(tableOf(md))
	if err != nil {
		b.Fatal(err)
	}
	docs := make([][]byte, 4096)
	for i := range docs {
		docs[i] = fmt.Appendf(nil, `{"numRecords":1000,"minValues":{"id":%d,"v":0.0001,"s":"s000000"},"maxValues":{"id":%d,"v":0.9999,"s":"s099999"},"nullCount":{"id":0,"v":0,"s":0}}`, 1000*i, 1000*i+999)
	}
	b.ReportAllocs()
	for b.Loop() {
		sb := newStatsBuilder(l, len(docs))
		for i, d := range docs {
			sb.appendJSON(i, d, true)
		}
		sb.finish(len(docs))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(docs)), "ns/file")
}
