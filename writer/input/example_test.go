package input_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer/input"
)

func Example() {
	schema, _ := actions.ParseDDL("id long not null, amount decimal(10,2), ts timestamp")
	data := `{"id":1,"amount":12.5,"ts":"2026-03-01T09:00:00+01:00"}
{"ID":2,"amount":"0.10"}
{"id":3,"amount":"12,5"}
`
	d, err := input.NewDecoder(strings.NewReader(data), "orders.jsonl", schema, input.WithBatchSize(2))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	for rec, err := range d.Records(context.Background()) {
		if err != nil {
			fmt.Println(err)
			return
		}
		rows, _ := reader.CanonicalRows(rec)
		for _, r := range rows {
			fmt.Println(string(r))
		}
	}
	// Output:
	// {"id":1,"amount":"12.50","ts":"2026-03-01T08:00:00.000000Z"}
	// {"id":2,"amount":"0.10","ts":null}
	// orders.jsonl:3: column "amount": "12,5" is not a decimal(10,2)
}
