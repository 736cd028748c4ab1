// Package sharing serves lakelog's tables over the Delta Sharing protocol
// (delta-io/delta-sharing, PROTOCOL.md): a REST server that lists shares,
// schemas and tables and answers a table's version, metadata, files (as
// URLs that read them for a limited time) and change data feed to
// pandas, Spark and BI tools, none of which is given the bucket.
//
// # Configuration
//
// [LoadConfig] reads the YAML the reference server reads (version,
// shares of schemas of tables with location, id, historyShared,
// startVersion; host, port, endpoint, preSignedUrlTimeoutSeconds, ssl)
// and lakelog's additions: recipients (a bearer token, or its SHA-256,
// an expirationTime and the shares each reads), changeDataFeedShared per
// table, limits (request body size, requests per second per recipient,
// page size), publicUrl, accessLog, urlSigningKeyFile. Unknown keys,
// names the protocol forbids, duplicates, missing tokens and shares that
// do not exist are errors naming the file, line and column. [New] opens
// every table and fails naming the one that does not open.
//
// # Requests
//
// The routes are the protocol's under the configured endpoint: GET
// /shares, /shares/{share}, /shares/{share}/schemas,
// .../schemas/{schema}/tables, /shares/{share}/all-tables (maxResults,
// pageToken); GET .../tables/{table}/version (startingTimestamp; HEAD of
// the table, the deprecated form); GET .../metadata (version,
// timestamp); POST .../query (predicateHints, jsonPredicateHints,
// limitHint, version, timestamp, startingVersion, endingVersion,
// maxFiles, pageToken, includeRefreshToken, refreshToken,
// includeHistoricalProtocol); GET .../changes (startingVersion or
// startingTimestamp, endingVersion or endingTimestamp,
// includeHistoricalMetadata, includeHistoricalProtocol, maxFiles,
// pageToken). Names are case-insensitive. Answers are NDJSON, streamed;
// the first 64 KiB are held back so that an error found early has its
// own status, and an error after them ends the stream with an
// endStreamAction carrying errorMessage, on which clients fail.
//
// Hints are best effort, as the protocol says: a hint that does not
// parse or bind is dropped, and a file is left out only when the
// snapshot's partition values and statistics (the reader's pruning, the
// same as lakelog's own scans) prove that no row matches. limitHint stops
// the files once their record counts reach it, only when no predicate
// applies. The change data feed returns a version's cdc files when it
// has any, else its adds and removes that change data, as Delta's CDF
// reader reads them; a version that does not record change data is 400.
//
// # Response formats
//
// The delta-sharing-capabilities header picks the format as the
// reference server does: parquet unless the client asks for delta; of
// both, parquet when the table's reader version is 1. A table with
// deletion vectors or column mapping needs delta and the reader feature
// declared (readerfeatures=deletionvectors, columnmapping); a parquet
// client is refused with UNSUPPORTED_OPERATION. In delta format files
// are the log's actions with their path replaced by a URL and their
// deletion vector's file too (storage type "p"); inline vectors stay
// inline. A delta client that declared no reader features gets reader
// version 1, as from the reference server.
//
// # Files
//
// File URLs come from the table's store when it can presign
// ([objstore.Presigner]: S3, GCS, Azure), else from this server: a URL
// of ENDPOINT/files/ carrying an HMAC of the table, key and expiry,
// served with Range support and refused (403) once expired or altered.
// Either way a URL expires after preSignedUrlTimeoutSeconds (its
// expirationTimestamp says when) and carries no credential of the store.
// A file the log names outside the table's root (an absolute path,
// "../other/x.parquet", the _delta_log folder) is never given out: the
// request fails naming the table ([ErrOutsideTable]).
//
// # Security
//
// Every API request needs a recipient's bearer token (401 when missing,
// malformed, unknown or expired; tokens are compared as SHA-256 hashes,
// all of them, in constant time). A recipient sees only its shares: a
// share that exists for others only is answered exactly as one that does
// not exist (404, same message, same work). Reading past versions or the
// change feed of a table that does not share them, or versions before
// its startVersion, is 403. Bodies over the size limit are 413; a
// recipient over its rate, and an address whose authentications keep
// failing, get 429 with Retry-After. Every request is one JSON line of
// the access log (never the token, never a query string). With an ssl
// configuration the server speaks TLS only. [Server.Serve] shuts down
// gracefully when its context ends; GET /health answers 503 meanwhile.
package sharing
