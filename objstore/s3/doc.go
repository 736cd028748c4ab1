// Package s3 is an [objstore.Store] over an Amazon S3 bucket, or any server
// that speaks S3's API with conditional writes (MinIO, Ceph RGW, Cloudflare
// R2...). Importing it registers the "s3" scheme with [objstore.Open]:
// s3://bucket/prefix is the bucket's objects under prefix/.
//
// # Configuration
//
// [New] reads the standard AWS configuration, as the AWS CLI and delta-rs
// do: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
// AWS_PROFILE, AWS_REGION, the shared config and credentials files, SSO,
// web identity, and container and instance roles. AWS_ENDPOINT_URL_S3 or
// AWS_ENDPOINT_URL selects another endpoint (MinIO:
// AWS_ENDPOINT_URL=http://127.0.0.1:9000). With such an endpoint requests
// use path-style addressing, unless AWS_VIRTUAL_HOSTED_STYLE_REQUEST=true.
// The region defaults to us-east-1. With static keys the EC2 instance
// metadata service is never contacted. Options override each of these.
//
// # Contract
//
//   - Put with IfAbsent is a PutObject with If-None-Match: *, so S3 itself
//     decides which of several racing writers creates the key. A 412
//     Precondition Failed is [objstore.ErrExists]. A 409
//     ConditionalRequestConflict (another conditional write to the key was
//     in flight, and ours was not applied) is retried up to 8 times with
//     jittered backoff, and then returned as an error that is not
//     ErrExists. The body is read into memory and sent in one request.
//   - Other puts send bodies up to the part size (8 MiB unless
//     [WithPartSize]) in one PutObject and longer or unsized bodies as a
//     multipart upload with up to [DefaultPartConcurrency] parts in flight
//     ([WithPartConcurrency]) while the next part is read from the body:
//     an upload holds at most that many part buffers (32 MiB at the
//     defaults), pooled across the store's uploads. Each part is retried
//     alone by the SDK (a failed or stalled part does not restart the
//     file). S3 publishes an object whole, or not at all; a failed
//     multipart upload is aborted. A completion whose answer was lost (the
//     SDK's retry then finds the upload gone) is recognized by the
//     object's multipart ETag.
//   - Get, GetRange (a ranged GET) and Head of a missing key wrap
//     [objstore.ErrNotFound]. Every operation on a missing bucket wraps
//     [objstore.ErrNoBucket] except Head, which cannot tell, as S3 sends no
//     body with a HEAD; a 401 or 403, or credentials that cannot be found,
//     wrap [objstore.ErrAccessDenied].
//   - List uses ListObjectsV2 with the prefix and StartAfter, so the server
//     skips what comes before startAfter; S3 orders keys by their UTF-8
//     bytes, which is the order the contract asks for. Keys travel
//     URL-encoded, so any key survives the XML listing.
//   - Delete of a missing key succeeds.
//   - Keys are checked as objstore's own stores check them, and a bad key
//     wraps [objstore.ErrInvalidKey].
//
// # Retries, stalls and lost responses
//
// The SDK's standard retryer retries failed requests (503 SlowDown and
// other throttling, 429, 5xx, broken connections, timeouts, a response
// body that broke off while the SDK read it): 6 tries in all with
// full-jitter backoff from 50ms to 5s, and no client-side retry quota
// ([WithRetryPolicy] and [objstore.RetryPolicy] tune them). Every request
// passes a stall watchdog: one that sends no byte of its body, gets no
// response headers, or receives no byte of its response body for the
// policy's StallTimeout (30s) is cancelled, and the SDK re-issues it. Get
// and GetRange read the body after the SDK has returned: a body that
// breaks off or stalls there is read again with a new request, with
// backoff, inside the policy's Deadline (5 minutes); and a GetRange checks
// that it received exactly the bytes asked for (Content-Range and length),
// or those up to the object's end, and otherwise retries and then fails:
// never a silent short read. The exception to all of this is the PutObject
// of a Put with IfAbsent, which is sent exactly once per attempt (a stall
// cancels it and is returned). Were the SDK to retry it after the server
// created the object but the response was lost, the retry would answer 412,
// and the store would report ErrExists for a create that was in fact its
// own. Instead such a Put returns the transport error, which is neither nil
// nor ErrExists: the object may or may not exist. A caller that retries and
// then gets ErrExists must read the object back to learn whose it is; the
// Delta commit loop does so by comparing the commit's txnId.
//
// Errors start with "s3:" and wrap the SDK's errors, so errors.As finds
// smithy.APIError and the HTTP response error.
package s3
