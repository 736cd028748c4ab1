// Package uniform writes the Iceberg metadata of Delta tables that enable
// UniForm (delta.universalFormat.enabledFormats=iceberg), so that Iceberg
// readers read the same data files as an Iceberg table.
//
// The conversion runs after a Delta commit has landed and is never part
// of it: Sync or Convert bring the metadata under <table>/metadata/ up to
// a Delta version, one Iceberg snapshot per Delta commit that changed
// files, reusing the manifests of files that did not change. The commit
// point of a conversion is the create-if-absent of the next
// metadata/v<N>.metadata.json: a reader sees the previous metadata or
// the new one. A conversion that failed or did not run is caught up by
// the next one. The Iceberg files are written with apache/iceberg-go.
package uniform
