package deltalog

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseTime reads a point in time as time travel takes it (TIMESTAMP AS
// OF, `lakelog --timestamp`): RFC 3339 (2026-03-01T10:00:00Z, with an
// offset), 'YYYY-MM-DD HH:MM:SS[.ffffff]' or 'YYYY-MM-DDTHH:MM:SS' (UTC),
// 'YYYY-MM-DD HH:MM', 'YYYY-MM-DD' (midnight UTC), or epoch milliseconds.
func ParseTime(s string) (time.Time, error) {
	t := strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04", "2006-01-02"} {
		if v, err := time.ParseInLocation(layout, t, time.UTC); err == nil {
			return v, nil
		}
	}
	if ms, err := strconv.ParseInt(t, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	return time.Time{}, fmt.Errorf("not a timestamp (RFC 3339, 'YYYY-MM-DD HH:MM:SS' UTC, or epoch milliseconds)")
}
