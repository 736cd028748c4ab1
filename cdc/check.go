package cdc

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrNotReady is a pipeline part that is missing or down: a broker that
// does not answer, a topic that does not exist, a connector that does
// not run.
var ErrNotReady = errors.New("cdc: not ready")

// WaitKafka checks the brokers and topics (CheckKafka) until they are
// ready or wait has passed (a new connector creates its topics with its
// first events), and returns the last check's error.
func WaitKafka(ctx context.Context, brokers, topics []string, wait time.Duration, log func(error)) error {
	deadline := time.Now().Add(wait)
	for {
		err := CheckKafka(ctx, brokers, topics)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		if log != nil {
			log(err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// CheckKafka checks that the brokers answer within 10 s and that the
// topics exist, so that a wrong address or topic is an error, not a
// consumer waiting forever.
func CheckKafka(ctx context.Context, brokers, topics []string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DialTimeout(5*time.Second))
	if err != nil {
		return fmt.Errorf("cdc: brokers %s: %w", strings.Join(brokers, ","), err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("%w: Kafka at %s does not answer: %v", ErrNotReady, strings.Join(brokers, ","), err)
	}
	for _, t := range resp.Topics {
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		}
		if t.ErrorCode != 0 {
			return fmt.Errorf("%w: topic %q does not exist on %s (is the connector running, with this topic.prefix and table in table.include.list?)", ErrNotReady, name, strings.Join(brokers, ","))
		}
	}
	return nil
}

// ParseNumericMode reads "string" or "decimal(38,S)".
func ParseNumericMode(s string) (NumericMode, error) {
	if strings.EqualFold(s, "string") {
		return NumericMode{AsString: true}, nil
	}
	m := regexp.MustCompile(`^(?i)decimal\(\s*38\s*,\s*(\d+)\s*\)$`).FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return NumericMode{}, fmt.Errorf("cdc: %q: numerics without precision become string or decimal(38,S)", s)
	}
	scale, err := strconv.Atoi(m[1])
	if err != nil || scale > 38 {
		return NumericMode{}, fmt.Errorf("cdc: %q: the scale is 0 to 38", s)
	}
	return NumericMode{Scale: scale}, nil
}
