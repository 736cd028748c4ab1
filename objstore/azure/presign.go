package azure

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/lakelog/lakelog/objstore"
)

var _ objstore.Presigner = (*Store)(nil)

// PresignGet implements [objstore.Presigner]: the blob's URL with a
// service SAS granting read only, for this blob only, until ttl from
// now, signed with the account key. A client without the shared key (a
// SAS token of its own, Entra ID) cannot sign one: the error wraps
// [objstore.ErrPresignUnsupported].
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration) (objstore.PresignedURL, error) {
	b, err := s.blob(objstore.OpGet, key)
	if err != nil {
		return objstore.PresignedURL{}, fmt.Errorf("azure: presign: %w", err)
	}
	expires := time.Now().Add(ttl).Truncate(time.Second) // a SAS carries whole seconds
	u, err := b.GetSASURL(sas.BlobPermissions{Read: true}, expires, nil)
	if errors.Is(err, bloberror.MissingSharedKeyCredential) {
		return objstore.PresignedURL{}, fmt.Errorf("azure: presign %s: %w: a SAS needs the account key (AZURE_STORAGE_ACCOUNT_KEY or a connection string with AccountKey)", key, objstore.ErrPresignUnsupported)
	}
	if err != nil {
		return objstore.PresignedURL{}, fmt.Errorf("azure: presign %s: %w", key, err)
	}
	return objstore.PresignedURL{URL: u, Expires: expires}, nil
}
