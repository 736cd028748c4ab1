package maintenance

import (
	"encoding/json"
)

// headParallelism bounds the concurrent requests of an existence check or
// a batch of deletes: object stores answer them one at a time, so many
// are in flight at once.
const headParallelism = 32

// sameJSON reports whether a and b encode to the same JSON.
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
