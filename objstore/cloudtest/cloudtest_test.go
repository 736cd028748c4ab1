package cloudtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// fakeTB records how Require ends a test instead of ending it.
type fakeTB struct {
	testing.TB
	fatal, skip string
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Fatalf(format string, a ...any) { f.fatal = fmt.Sprintf(format, a...) }
func (f *fakeTB) Skipf(format string, a ...any)  { f.skip = fmt.Sprintf(format, a...) }

func TestRequire(t *testing.T) {
	const env = "LAKELOG_CLOUDTEST_PROBE"
	for _, tc := range []struct {
		name, value, ci, skipCloud string
		want                       string // "value", "fatal" or "skip"
		mention                    string // in the message
	}{
		{"Set", "x", "true", "", "value", ""},
		{"MissingUnderCI", "", "true", "1", "fatal", "under CI"},
		{"MissingSkipped", "", "", "1", "skip", "LAKELOG_SKIP_CLOUD"},
		{"MissingLocally", "", "", "", "fatal", "services_start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(env, tc.value)
			t.Setenv("CI", tc.ci)
			t.Setenv("LAKELOG_SKIP_CLOUD", tc.skipCloud)
			if tc.value == "" {
				os.Unsetenv(env)
			}
			f := &fakeTB{}
			got := Require(f, env, "a server")
			switch tc.want {
			case "value":
				if got != tc.value || f.fatal != "" || f.skip != "" {
					t.Errorf("Require = %q (fatal %q, skip %q), want %q", got, f.fatal, f.skip, tc.value)
				}
			case "fatal":
				if f.fatal == "" || f.skip != "" || !strings.Contains(f.fatal, tc.mention) {
					t.Errorf("Require: fatal %q, skip %q; want a fatal mentioning %q", f.fatal, f.skip, tc.mention)
				}
			case "skip":
				if f.skip == "" || f.fatal != "" || !strings.Contains(f.skip, tc.mention) {
					t.Errorf("Require: fatal %q, skip %q; want a skip mentioning %q", f.fatal, f.skip, tc.mention)
				}
			}
		})
	}
}
