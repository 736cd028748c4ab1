//go:build !linux

package objstore

import (
	"context"
	"io"
)

// createExclusive creates p from body unless it exists (fs.ErrExist):
// see linkNamed. The caller syncs dir.
func createExclusive(ctx context.Context, dir, p string, body io.Reader) error {
	return linkNamed(ctx, dir, p, body)
}
