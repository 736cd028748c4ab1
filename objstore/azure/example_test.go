package azure_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/azure"
)

// A table's commit is created only if no other writer took its version.
// With AZURE_STORAGE_USE_EMULATOR=true this runs against a local Azurite.
func Example() {
	ctx := context.Background()
	store, err := azure.New(ctx, "lakehouse", "tables/events")
	if err != nil {
		log.Fatal(err)
	}
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
	store, err := objstore.Open(ctx, "az://lakehouse/tables/events")
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
