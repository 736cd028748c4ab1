// Package golden loads the reader conformance corpus in
// ../shared/testdata/delta: real Delta tables written by Spark, Databricks
// and delta-rs, each with the result a correct reader must produce.
package golden
