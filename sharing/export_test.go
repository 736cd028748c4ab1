package sharing

// FileIDOf is the parquet-scheme file id of a path, for the tests.
var FileIDOf = func(path string) string { return fileID(path, FormatParquet) }
