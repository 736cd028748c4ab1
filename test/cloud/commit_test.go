package cloud

import (
	"context"
	"os"
	"testing"

	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/objstore/azure"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	_ "github.com/lakelog/lakelog/objstore/gcs" // gs:// URIs
	"github.com/lakelog/lakelog/objstore/s3"
	"github.com/lakelog/lakelog/test/multiwriter"
)

func TestMain(m *testing.M) {
	multiwriter.MaybeChild()
	os.Exit(m.Run())
}

const procs, commits = 8, 50

func TestConcurrentProcessesS3(t *testing.T) {
	cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
	ctx := context.Background()
	bucket := cloudtest.Name("lakelog-mw-")
	st, err := s3.New(ctx, bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().CreateBucket(ctx, &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	multiwriter.Run(t, "s3://"+bucket+"/orders", procs, commits)
}

func TestConcurrentProcessesGCS(t *testing.T) {
	cloudtest.Require(t, "STORAGE_EMULATOR_HOST", "fake-gcs-server")
	// .ci/services.sh creates the bucket "lakelog"; each test takes a fresh
	// prefix in it.
	multiwriter.Run(t, "gs://lakelog/"+cloudtest.Name("mw-"), procs, commits)
}

func TestConcurrentProcessesAzure(t *testing.T) {
	cloudtest.Require(t, "AZURE_STORAGE_CONNECTION_STRING", "Azurite")
	ctx := context.Background()
	name := cloudtest.Name("lakelog-mw-")
	st, err := azure.New(ctx, name, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Container().Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	multiwriter.Run(t, "az://"+name+"/orders", procs, commits)
}
