package s3

import (
	"context"
	"fmt"
	"time"

	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/objstore"
)

// maxPresign is the longest a SigV4 query signature may stay valid.
const maxPresign = 7 * 24 * time.Hour

var _ objstore.Presigner = (*Store)(nil)

// PresignGet implements [objstore.Presigner]: a GetObject request signed
// in its query string (SigV4, X-Amz-Expires) with the store's credentials,
// at the store's endpoint and addressing style. S3 accepts at most seven
// days; a longer ttl is refused. Temporary credentials (a session token)
// end the URL's life when they expire, whatever ttl says.
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration) (objstore.PresignedURL, error) {
	name, err := s.root.Name(key)
	if err != nil {
		return objstore.PresignedURL{}, fmt.Errorf("s3: presign: %w", err)
	}
	if ttl > maxPresign {
		return objstore.PresignedURL{}, fmt.Errorf("s3: presign %s: expiry %v is over S3's limit of %v", key, ttl, maxPresign)
	}
	now := time.Now()
	req, err := s3sdk.NewPresignClient(s.client).PresignGetObject(ctx,
		&s3sdk.GetObjectInput{Bucket: &s.bucket, Key: &name}, s3sdk.WithPresignExpires(ttl))
	if err != nil {
		return objstore.PresignedURL{}, fmt.Errorf("s3: presign %s: %w", key, err)
	}
	return objstore.PresignedURL{URL: req.URL, Expires: now.Add(ttl)}, nil
}
