package actions_test

import (
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

func ExampleParseCommit() {
	commit := `{"commitInfo":{"timestamp":1700000000000,"operation":"WRITE","clusterId":"c-1"}}
{"add":{"path":"d=2021-01-01/part-0.parquet","partitionValues":{"d":"2021-01-01"},"size":512,"modificationTime":1700000000000,"dataChange":true,"stats":"{\"numRecords\":3}"}}
`
	as, err := actions.ParseCommit(strings.NewReader(commit))
	if err != nil {
		panic(err)
	}
	for _, a := range as {
		switch {
		case a.CommitInfo != nil:
			fmt.Println(a.Kind(), a.CommitInfo.Operation, string(a.CommitInfo.Extra["clusterId"]))
		case a.Add != nil:
			d, _ := actions.ParsePartitionValue(actions.TypeDate, a.Add.PartitionValues["d"])
			st, _ := actions.ParseStats(a.Add.Stats)
			fmt.Println(a.Kind(), a.Add.Path, d, st.NumRecords)
		}
	}
	out, _ := actions.MarshalCommit(as)
	fmt.Print(string(out))
	// Output:
	// commitInfo WRITE "c-1"
	// add d=2021-01-01/part-0.parquet 2021-01-01 3
	// {"commitInfo":{"timestamp":1700000000000,"operation":"WRITE","clusterId":"c-1"}}
	// {"add":{"path":"d=2021-01-01/part-0.parquet","partitionValues":{"d":"2021-01-01"},"size":512,"modificationTime":1700000000000,"dataChange":true,"stats":"{\"numRecords\":3}"}}
}

func ExampleParseDDL() {
	schema, err := actions.ParseDDL("id bigint not null, amount decimal(10,2), tags array<string>")
	if err != nil {
		panic(err)
	}
	s, _ := actions.SchemaString(schema)
	fmt.Println(s)
	fmt.Println(actions.FormatDDL(schema))

	_, err = actions.ParseDDL("id long, name lnog")
	fmt.Println(err)
	// Output:
	// {"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},{"name":"amount","type":"decimal(10,2)","nullable":true,"metadata":{}},{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]}
	// id long not null, amount decimal(10,2), tags array<string>
	// actions: DDL at column 15: unknown type "lnog"
}

func ExampleParseSchema() {
	schema, err := actions.ParseSchema(`{"type":"struct","fields":[{"name":"ts","type":"timestamp","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-7"}}]}`)
	if err != nil {
		panic(err)
	}
	f := schema.Fields[0]
	id, _ := f.FieldID()
	fmt.Println(f.Name, f.Type, f.PhysicalName(actions.ColumnMappingName), id)
	// Output:
	// ts timestamp col-7 1
}
