"""Reads a UniForm table's Iceberg metadata with pyiceberg, for lakelog's
interop tests (TestUniform*).

    python iceberg_read.py METADATA_URI OUT_DIR

Opens the table from its metadata file (StaticTable), and writes, for each
snapshot, its rows read by snapshot id to OUT_DIR/<id>.parquet and read by
time travel to the snapshot's timestamp (snapshot_as_of_timestamp) to
OUT_DIR/ts-<id>.parquet, strings and binaries as plain (not large) Arrow
types. Prints one JSON object: {"snapshots": [{"id", "delta_version",
"rows"}], "current": id}.
"""

import json
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.table import StaticTable


def plain(table):
    fields = []
    for f in table.schema:
        t = f.type
        if pa.types.is_large_string(t) or pa.types.is_string_view(t):
            t = pa.string()
        elif pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
            t = pa.binary()
        fields.append(pa.field(f.name, t, f.nullable))
    return table.cast(pa.schema(fields))


def main():
    uri, out = sys.argv[1], sys.argv[2]
    t = StaticTable.from_metadata(uri)
    snaps = []
    for s in t.snapshots():
        rows = plain(t.scan(snapshot_id=s.snapshot_id).to_arrow())
        pq.write_table(rows, os.path.join(out, "%d.parquet" % s.snapshot_id))
        at = t.snapshot_as_of_timestamp(s.timestamp_ms)
        by_time = plain(t.scan(snapshot_id=at.snapshot_id).to_arrow())
        pq.write_table(by_time, os.path.join(out, "ts-%d.parquet" % s.snapshot_id))
        props = s.summary.additional_properties if s.summary else {}
        snaps.append({"id": s.snapshot_id, "delta_version": int(props.get("delta-version", -1)), "rows": rows.num_rows})
    cur = t.current_snapshot()
    print(json.dumps({"snapshots": snaps, "current": cur.snapshot_id if cur else None}))


if __name__ == "__main__":
    main()
