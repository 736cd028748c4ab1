// Package keyspace maps the keys of an objstore.Store rooted at a prefix of a
// bucket to the bucket's own object names and back. The cloud stores share
// it so that they agree on what a root and a key are.
package keyspace
