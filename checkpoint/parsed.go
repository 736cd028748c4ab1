package checkpoint

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
)

type parsedSpec struct{}

type parsedEncoder struct{}

func newParsedEncoder(*parsedSpec) (*parsedEncoder, error) { return &parsedEncoder{}, nil }

func (p *parsedEncoder) fields() (*arrow.Field, *arrow.Field) { return nil, nil }
func (p *parsedEncoder) bind(structB)                         {}
func (p *parsedEncoder) appendAdd(*actions.Add) error         { return nil }
