package main

// The cloud stores register their URI schemes (s3://, gs://, az://) with
// objstore.Open when imported.
import (
	_ "github.com/lakelog/lakelog/objstore/azure"
	_ "github.com/lakelog/lakelog/objstore/gcs"
	_ "github.com/lakelog/lakelog/objstore/s3"
)
