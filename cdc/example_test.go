package cdc_test

import (
	"fmt"

	"github.com/lakelog/lakelog/cdc"
)

func Example() {
	// One change event as Kafka Connect's JsonConverter writes it.
	value := []byte(`{"schema": {"type": "struct", "name": "pg.public.t.Envelope", "fields": [
	    {"field": "after", "type": "struct", "optional": true, "fields": [
	      {"field": "id", "type": "int32", "optional": false},
	      {"field": "price", "type": "bytes", "optional": true, "name": "org.apache.kafka.connect.data.Decimal",
	       "parameters": {"scale": "3", "connect.decimal.precision": "14"}},
	      {"field": "body", "type": "string", "optional": true}]},
	    {"field": "op", "type": "string"}]},
	  "payload": {"op": "u", "after": {"id": 7, "price": "BNI=", "body": "__debezium_unavailable_value"},
	    "source": {"lsn": 120, "sequence": "[\"100\",\"120\"]", "snapshot": "false"}}}`)
	dec := cdc.NewDecoder()
	e, err := dec.Decode(nil, value)
	if err != nil {
		fmt.Println(err)
		return
	}
	pos, _ := e.Position()
	fmt.Println("op", e.Op, "at", pos)
	for i, c := range e.Schema.Columns {
		switch {
		case e.Unavailable != nil && e.Unavailable[i]:
			fmt.Printf("%s %s: unavailable\n", c.Name, c.Type)
		default:
			fmt.Printf("%s %s: %v\n", c.Name, c.Type, e.Row[i])
		}
	}
	// Output:
	// op u at 100/120
	// id integer: 7
	// price decimal(14,3): 1.234
	// body string: unavailable
}
