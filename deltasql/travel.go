package deltasql

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
)

// atVersionPath is Delta's time travel in a path: /p@v12 or
// /p@20240102030405000 (yyyyMMddHHmmssSSS).
var atVersionPath = regexp.MustCompile(`@(v[0-9]+|[0-9]{17})$`)

// atVersion reads time travel written after a table: t@v1, t@v1 with a
// timestamp yyyyMMddHHmmssSSS, or inside a path delta.`/p@v1`.
func (p *parser) atVersion(t *tableRef) error {
	if t.path != "" {
		if m := atVersionPath.FindStringSubmatch(t.path); m != nil {
			t.path = strings.TrimSuffix(t.path, m[0])
			return setAtVersion(t, m[1])
		}
	}
	if !p.isPunct("@") {
		return nil
	}
	pos := p.tok.pos
	if err := p.advance(); err != nil {
		return err
	}
	if p.tok.kind != tokIdent && p.tok.kind != tokNumber {
		return p.errorf(pos, "expected v and a version (t@v12) or a timestamp yyyyMMddHHmmssSSS after @ but found %s", p.describe())
	}
	text := p.tok.text
	if err := setAtVersion(t, text); err != nil {
		return p.errorf(p.tok.pos, "%v", err)
	}
	return p.advance()
}

func setAtVersion(t *tableRef, text string) error {
	if strings.HasPrefix(text, "v") || strings.HasPrefix(text, "V") {
		n, err := strconv.ParseInt(text[1:], 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("@%s: want @v and a version, as in @v12", text)
		}
		t.version = &n
		return nil
	}
	if len(text) != 17 {
		return fmt.Errorf("@%s: want @v and a version, or a timestamp yyyyMMddHHmmssSSS", text)
	}
	ts, err := time.ParseInLocation("20060102150405.000", text[:14]+"."+text[14:], time.UTC)
	if err != nil {
		return fmt.Errorf("@%s: want @v and a version, or a timestamp yyyyMMddHHmmssSSS", text)
	}
	t.timestamp = ts.Format(time.RFC3339Nano)
	return nil
}

// constantTimestamp evaluates a constant expression of TIMESTAMP AS OF
// (date_sub(current_date(), 1), current_timestamp() - INTERVAL 1 DAY)
// to the text of the instant.
func constantTimestamp(e Expr) (string, error) {
	b, err := expr.Bind(&expr.Cast{X: e.Expr, To: actions.TypeTimestamp}, &actions.StructType{})
	if err != nil {
		return "", err
	}
	v, err := expr.EvalRow(b, func(col string) (any, bool) { return nil, false })
	if err != nil {
		return "", err
	}
	ts, ok := v.(actions.Timestamp)
	if !ok {
		return "", fmt.Errorf("%s is not a timestamp", e.Expr)
	}
	return time.UnixMicro(int64(ts)).UTC().Format(time.RFC3339Nano), nil
}
