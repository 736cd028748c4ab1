package actions_test

import (
	"testing"

	"github.com/lakelog/lakelog/actions"
)

// JSONText writes operationParameters as Spark does: no HTML escaping,
// nil lists and maps as empty ones.
func TestJSONText(t *testing.T) {
	var nilList []string
	var nilMap map[string]string
	for _, c := range []struct {
		v    any
		want string
	}{
		{[]string{"age > 40 AND s <> '&'"}, `["age > 40 AND s <> '&'"]`},
		{map[string]string{"k": "<b>"}, `{"k":"<b>"}`},
		{"a > b", `"a > b"`},
		{nilList, "[]"},
		{nilMap, "{}"},
		{nil, "null"},
	} {
		if got := actions.JSONText(c.v); got != c.want {
			t.Errorf("JSONText(%#v) = %s, want %s", c.v, got, c.want)
		}
	}
}
