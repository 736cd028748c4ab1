package gcs_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/gcs"
)

// A table's commit is created only if no other writer took its version.
// With STORAGE_EMULATOR_HOST=127.0.0.1:4443 this runs against a local
// fake-gcs-server.
func Example() {
	ctx := context.Background()
	store, err := gcs.New(ctx, "lakehouse", "tables/events")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	commit := `{"commitInfo":{"operation":"WRITE","txnId":"7f0c"}}` + "\n"
	err = store.Put(ctx, "_delta_log/00000000000000000000.json",
		strings.NewReader(commit), objstore.PutOptions{IfAbsent: true})
	switch {
	case errors.Is(err, objstore.ErrExists):
		fmt.Println("version 0 is taken: read it, check for conflicts, try version 1")
	case err != nil:
		log.Fatal(err) // outcome unknown: retry, and read back on ErrExists
	default:
		fmt.Println("committed version 0")
	}
}

// The same store, opened by URI as the command line does.
func Example_open() {
	ctx := context.Background()
	store, err := objstore.Open(ctx, "gs://lakehouse/tables/events")
	if err != nil {
		log.Fatal(err)
	}
	for info, err := range store.List(ctx, "_delta_log/", "_delta_log/00000000000000000009.json") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(info.Key, info.Size)
	}
}
