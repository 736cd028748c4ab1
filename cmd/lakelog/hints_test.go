package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIWords: the library's errors name Go calls; the verbs and
// lakelog sql say what to type instead.
func TestCLIWords(t *testing.T) {
	tbl := filepath.Join(t.TempDir(), "t")
	if code, _, errOut := lakelog(t, "create", tbl, "--schema", "a long"); code != exitOK {
		t.Fatal(errOut)
	}
	code, _, errOut := lakelog(t, "vacuum", tbl, "--retain", "0h")
	if code != exitError || !strings.Contains(errOut, "give --force if no operation is running") || strings.Contains(errOut, "maintenance.") {
		t.Errorf("vacuum: %d %s", code, errOut)
	}
	code, _, errOut = lakelog(t, "sql", "VACUUM delta.`"+tbl+"` RETAIN 0 HOURS")
	if code != exitError || !strings.Contains(errOut, "allow it only if no operation is running") || !strings.Contains(errOut, "retentionDurationCheck.enabled = false") || strings.Contains(errOut, "maintenance.") {
		t.Errorf("sql vacuum: %d %s", code, errOut)
	}
	code, _, errOut = lakelog(t, "alter", tbl, "--change-type", "a:string")
	if code != exitError || strings.Contains(errOut, "maintenance.") {
		t.Errorf("alter --change-type: %d %s", code, errOut)
	}
	for _, verb := range []string{"alter", "sql"} {
		got := cliWords(verb, errString("x needs type widening: set delta.enableTypeWidening=true first (maintenance.SetProperties)"))
		if strings.Contains(got, "maintenance.") {
			t.Errorf("%s: %s", verb, got)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
