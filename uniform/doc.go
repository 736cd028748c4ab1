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
//
// # UniForm
//
// A table with `delta.universalFormat.enabledFormats=iceberg` (which needs
// `delta.enableIcebergCompatV2=true` and column mapping; `CheckProperties`
// refuses it otherwise, and `hudi` always) carries Iceberg metadata beside
// its log, under `<table>/metadata/`, so that Iceberg readers (pyiceberg,
// iceberg-go, Trino...) read the same Parquet files as an Iceberg table.
//
//   - IcebergCompatV1/V2 are feature records in `deltalog/iceberg.go`:
//     a write to a table that enables one is refused while the table does not
//     comply (column mapping name or id, no deletion vectors, the type
//     allow-list; V1 no arrays or maps). What lakelog does not write yet is
//     refused by name, never written wrong: arrays and maps (their
//     `parquet.field.nested.ids`). Writers of such a table put the partition
//     columns in the data files too, after the data columns, under their
//     physical names and field ids (`writer.materializePartitions`; stats stay
//     the data columns').
//   - Never part of the commit. `uniform.Sync(ctx, store, root)` (or
//     `Convert(ctx, snap)`) runs after a commit has landed; its failure is
//     reported and leaves the Delta table as it was. The next run catches up
//     from the Delta version the Iceberg metadata records
//     (`delta-version`, Spark's property; `converted_delta_version` and the
//     timestamps too).
//   - Incremental. Each Delta commit since the last converted version
//     that adds or removes files becomes one Iceberg snapshot (operation
//     append, delete, overwrite, or replace when nothing changed data), read
//     with `deltalog.Commits`: the parent's manifests are reused, those
//     holding a removed file are rewritten (that entry DELETED, the others
//     EXISTING with their sequence numbers), and one new manifest holds the
//     added files. Past `WithMaxManifests` (100) manifests, all but the
//     newest are merged into one per partition spec (Iceberg's manifest
//     merging), so a snapshot lists a bounded number. A gap of more than `WithMaxCommits` (100) commits, the
//     first conversion, or metadata that lacks a file Delta removes
//     (divergence) is converted from the snapshot as one snapshot.
//   - Column metrics. A manifest entry has the file's record count, size,
//     partition values and, from the add's stats, top-level null counts and
//     lower/upper bounds of the types whose Delta bounds are exact (byte,
//     short, integer, long, date): Delta truncates string bounds and rounds
//     timestamps to milliseconds, which are no sound Iceberg upper bounds, so
//     those (and floats, decimals) are left out rather than guessed.
//   - Schema and partitions. The Iceberg schema has the logical names and
//     the column mapping ids (the Parquet field ids of the data files, so
//     Iceberg readers find columns by id); byte/short/integer are `int`,
//     timestamp is `timestamptz`, timestamp_ntz `timestamp`. A metaData
//     action adds a schema (or reuses an equal one) and an identity partition
//     spec of the partition columns when they change.
//   - Atomic. Manifests and manifest lists are new files; the commit
//     point is the create-if-absent of `metadata/v<N>.metadata.json` (the
//     Hadoop-table convention: a predictable name is what makes the create
//     atomic; the issue's `vN-<uuid>` names would need a catalog to be the
//     pointer). `version-hint.text` is written after it, a hint only: the
//     newest file is found from the hint by probing `v<N+1>`, or by listing.
//     A converter that loses the create reloads and tries again; a crash
//     leaves only unreferenced files.
//   - A post-commit hook. Importing `uniform` registers `Hook()` with
//     `deltalog.RegisterHook`: every commit of every operation (Go API, CLI
//     verbs, `lakelog sql`) to a UniForm table converts up to its version; a
//     failure is a `*deltalog.HookError` with the commit standing (the CLI
//     prints it as a warning), and the next commit or `lakelog uniform sync
//     TABLE` catches up. `lakelog create --uniform iceberg` sets column
//     mapping by name (unless given), `delta.enableIcebergCompatV2` and the
//     format.
//   - iceberg-go writes the manifests (`iceberg.WriteManifest`), manifest
//     lists (`WriteManifestList`) and the metadata (`table.MetadataBuilder`,
//     its JSON); nothing of Avro is written by hand. Table locations are
//     `file://` (absolute) for a local folder, `s3://` and `gs://` as the
//     stores name them (read back by iceberg-go on MinIO and fake-gcs-server
//     in `test/cloud`); an `az://` table is refused (no `abfss://` mapping
//     yet), the failure reported after the commit like any other.
package uniform
