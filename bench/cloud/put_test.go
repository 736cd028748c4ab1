package cloud

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/azure"
	"github.com/lakelog/lakelog/objstore/gcs"
	"github.com/lakelog/lakelog/objstore/s3"
)

// commitBody is about the size of a one-file append commit with stats
// and commitInfo: 2 KB.
var commitBody = func() []byte {
	b := []byte(`{"commitInfo":{"timestamp":1767225600000,"operation":"WRITE","operationParameters":{"mode":"Append"},"readVersion":41,"isolationLevel":"Serializable","isBlindAppend":true,"engineInfo":"lakelog","txnId":"3f2a1c9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"}}` + "\n")
	add := `{"add":{"path":"country=nl/part-00000-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-c000.snappy.parquet","partitionValues":{"country":"nl"},"size":123456,"modificationTime":1767225600000,"dataChange":true,"stats":"{\"numRecords\":1000,\"minValues\":{\"id\":1,\"name\":\"aaa\"},\"maxValues\":{\"id\":1000,\"name\":\"zzz\"},\"nullCount\":{\"id\":0,\"name\":3}}"}}` + "\n"
	for len(b)+len(add) <= 2048 {
		b = append(b, add...)
	}
	return b
}()

func runID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// need skips the benchmark unless env is set.
func need(b *testing.B, env string) {
	b.Helper()
	if os.Getenv(env) == "" {
		b.Skipf("%s is not set: start the emulators with `source .ci/services.sh; services_start`", env)
	}
}

// benchStorePut measures Put with IfAbsent of a fresh commit key per
// iteration through a store.
func benchStorePut(b *testing.B, st objstore.Store) {
	ctx := context.Background()
	b.SetBytes(int64(len(commitBody)))
	b.ReportAllocs()
	v := 0
	for b.Loop() {
		key := fmt.Sprintf("_delta_log/%020d.json", v)
		if err := st.Put(ctx, key, bytes.NewReader(commitBody), objstore.PutOptions{IfAbsent: true, Size: int64(len(commitBody))}); err != nil {
			b.Fatal(err)
		}
		v++
	}
}

// BenchmarkConditionalPut measures the create-if-absent PUT of a 2 KB
// commit on each emulator: through the objstore stores, and on S3 also as
// a bare SDK PutObject with If-None-Match, the floor under both.
func BenchmarkConditionalPut(b *testing.B) {
	ctx := context.Background()
	b.Run("s3/sdk-putobject", func(b *testing.B) {
		need(b, "AWS_ENDPOINT_URL")
		st := newS3(b)
		client, bucket := st.Client(), st.Bucket()
		prefix := "bench-" + runID() + "/_delta_log/"
		b.SetBytes(int64(len(commitBody)))
		b.ReportAllocs()
		v := 0
		for b.Loop() {
			_, err := client.PutObject(ctx, &s3sdk.PutObjectInput{
				Bucket:        &bucket,
				Key:           aws.String(fmt.Sprintf("%s%020d.json", prefix, v)),
				Body:          bytes.NewReader(commitBody),
				ContentLength: aws.Int64(int64(len(commitBody))),
				IfNoneMatch:   aws.String("*"),
			})
			if err != nil {
				b.Fatal(err)
			}
			v++
		}
	})
	b.Run("s3/store", func(b *testing.B) {
		need(b, "AWS_ENDPOINT_URL")
		benchStorePut(b, newS3(b))
	})
	b.Run("gcs/store", func(b *testing.B) {
		need(b, "STORAGE_EMULATOR_HOST")
		bucket := "bench-" + runID()
		st, err := gcs.New(ctx, bucket, "t")
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		if err := st.Client().Bucket(bucket).Create(ctx, "lakelog", nil); err != nil {
			b.Fatal(err)
		}
		benchStorePut(b, st)
	})
	b.Run("azure/store", func(b *testing.B) {
		need(b, "AZURE_STORAGE_CONNECTION_STRING")
		name := "bench-" + runID()
		st, err := azure.New(ctx, name, "t")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.Container().Create(ctx, nil); err != nil {
			b.Fatal(err)
		}
		defer st.Container().Delete(context.Background(), nil)
		benchStorePut(b, st)
	})
}

// newS3 returns a store in a fresh MinIO bucket.
func newS3(b *testing.B) *s3.Store {
	b.Helper()
	ctx := context.Background()
	bucket := "bench-" + runID()
	st, err := s3.New(ctx, bucket, "bench-"+runID())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Client().CreateBucket(ctx, &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil && !strings.Contains(err.Error(), "BucketAlreadyOwnedByYou") {
		b.Fatal(err)
	}
	return st
}
