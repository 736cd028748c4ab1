package objstore

import "io/fs"

// TempPrefix is the name prefix of Local's temporary files.
const TempPrefix = tempPrefix

// NamedCreatesOnly makes Local's create-if-absent use named temporary
// files, as on systems without O_TMPFILE, until restore is called.
func NamedCreatesOnly() (restore func()) {
	unnamedCreates = false
	return func() { unnamedCreates = true }
}

// WatchReadDir makes l report each folder its List reads to seen.
func WatchReadDir(l *Local, seen func(dir string)) {
	next := l.readDir
	l.readDir = func(name string) ([]fs.DirEntry, error) {
		seen(name)
		return next(name)
	}
}
