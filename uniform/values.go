package uniform

import (
	"bytes"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/lakelog/lakelog/actions"
)

type bytesBuffer = bytes.Buffer

func bytesReader(s string) *strings.Reader { return strings.NewReader(s) }

// decimalValue is a Delta decimal as Iceberg's 128-bit decimal.
func decimalValue(d actions.Decimal) iceberg.Decimal {
	return iceberg.Decimal{Val: decimal128.FromBigInt(d.Unscaled), Scale: d.Scale}
}
