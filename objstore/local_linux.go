package objstore

import (
	"context"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// createExclusive creates p from body unless it exists (fs.ErrExist),
// through a file that has no name until it is complete: an O_TMPFILE file
// in dir, written and synced, then linked as p. Unlike a named temporary
// file it needs no folder entry to be made and removed, which is most of
// the cost of a commit on local disk, and a crash leaves nothing behind.
// File systems without O_TMPFILE, and systems where the file cannot be
// linked through /proc, take the named route (linkNamed). The caller
// syncs dir.
func createExclusive(ctx context.Context, dir, p string, body io.Reader) error {
	if !unnamedCreates {
		return linkNamed(ctx, dir, p, body)
	}
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return linkNamed(ctx, dir, p, body) // body is unread
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	if err := copySync(ctx, f, body); err != nil {
		return err
	}
	err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, p, unix.AT_SYMLINK_FOLLOW)
	if err == nil || err == unix.EEXIST {
		return os.NewSyscallError("linkat", err) // nil stays nil; EEXIST is fs.ErrExist
	}
	// No /proc, or the link refused: the same bytes through a named file.
	if _, serr := f.Seek(0, io.SeekStart); serr != nil {
		return os.NewSyscallError("linkat", err)
	}
	return linkNamed(ctx, dir, p, f)
}
