package objstore

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrPresignUnsupported is returned (wrapped) by [PresignGet] when a store
// cannot hand out a URL for its objects: it has no [Presigner], or its
// credentials cannot sign (an Azure client with a SAS token rather than
// the account key, a GCS client without a service account key). It is
// terminal: the store's configuration must change.
var ErrPresignUnsupported = errors.New("objstore: store cannot presign URLs")

// Presigner is implemented by stores that can give out a URL through
// which whoever holds it may read one object with plain HTTP GETs (Range
// requests included) for a limited time, without the store's
// credentials: S3 signs the query (SigV4), GCS makes a V4 signed URL,
// Azure a read-only blob SAS. The URL carries a signature, never a key
// or a token of the store.
type Presigner interface {
	// PresignGet returns a URL reading key until ttl from now. Expires
	// is when the URL stops working, never later than asked (a store
	// refuses a ttl over its own limit rather than shorten it). The key
	// is checked as every other method checks it; the object need not
	// exist (the URL then answers 404).
	PresignGet(ctx context.Context, key string, ttl time.Duration) (PresignedURL, error)
}

// PresignedURL is a URL from [Presigner.PresignGet].
type PresignedURL struct {
	URL     string
	Expires time.Time
}

// PresignGet asks s for a URL reading key for ttl (see [Presigner]); a
// store without one fails with ErrPresignUnsupported naming its location.
// A ttl that is not positive is refused.
func PresignGet(ctx context.Context, s Store, key string, ttl time.Duration) (PresignedURL, error) {
	if ttl <= 0 {
		return PresignedURL{}, fmt.Errorf("objstore: presign %s: expiry %v is not positive", key, ttl)
	}
	p, ok := s.(Presigner)
	if !ok {
		return PresignedURL{}, fmt.Errorf("%w: %s", ErrPresignUnsupported, Location(s))
	}
	return p.PresignGet(ctx, key, ttl)
}
