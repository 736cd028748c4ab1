package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/objstore"
)

// Two writers race for version 0 of a table's log: the store lets exactly
// one create it.
func ExampleMem() {
	ctx := context.Background()
	store := objstore.NewMem()
	commit := "_delta_log/00000000000000000000.json"

	err := store.Put(ctx, commit, strings.NewReader(`{"commitInfo":{"operation":"CREATE TABLE"}}`), objstore.PutOptions{IfAbsent: true})
	fmt.Println("first writer:", err)

	err = store.Put(ctx, commit, strings.NewReader(`{"commitInfo":{"operation":"WRITE"}}`), objstore.PutOptions{IfAbsent: true})
	fmt.Println("second writer lost:", errors.Is(err, objstore.ErrExists))

	body, _ := store.Get(ctx, commit)
	fmt.Println(string(body))

	for info, err := range store.List(ctx, "_delta_log/", "") {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(info.Key, info.Size)
	}
	// Output:
	// first writer: <nil>
	// second writer lost: true
	// {"commitInfo":{"operation":"CREATE TABLE"}}
	// _delta_log/00000000000000000000.json 43
}

// Fail the first commit's reply after it was written, as a dropped
// connection would, and see the retry find its own commit in place.
func ExampleFaulty() {
	ctx := context.Background()
	mem := objstore.NewMem()
	store := objstore.Faulty(mem, objstore.Times(1, objstore.LoseResponse(objstore.OpPut, "_delta_log/*.json")))
	commit := "_delta_log/00000000000000000001.json"

	err := store.Put(ctx, commit, strings.NewReader("mine"), objstore.PutOptions{IfAbsent: true})
	fmt.Println(errors.Is(err, objstore.ErrLostResponse), errors.Is(err, objstore.ErrInjected))

	err = store.Put(ctx, commit, strings.NewReader("mine"), objstore.PutOptions{IfAbsent: true})
	fmt.Println("retry:", errors.Is(err, objstore.ErrExists))

	body, _ := mem.Get(ctx, commit)
	fmt.Println(string(body))
	// Output:
	// true true
	// retry: true
	// mine
}
