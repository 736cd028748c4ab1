"""The Delta Sharing Python connector (PyPI delta-sharing) as a peer of
lakelog's sharing server, for test/interop's TestSharingPython*.

Run as `python sharing_client.py REQUEST`, REQUEST a JSON object:

  {"op": "load", "profile", "table" ("share.schema.table"), "version"?,
   "timestamp"?, "limit"?, "json_predicate"?, "use_delta_format"?,
   "ref", "out"}
      delta_sharing.load_as_pandas with those arguments.
  {"op": "changes", "profile", "table", "starting_version"?,
   "ending_version"?, "starting_timestamp"?, "ending_timestamp"?,
   "use_delta_format"?, "ref", "out"}
      delta_sharing.load_table_changes_as_pandas.
  {"op": "version", "profile", "table", "starting_timestamp"?}
      delta_sharing.get_table_version.
  {"op": "list", "profile"}  SharingClient.list_all_tables.

Rows go to the Parquet file "out", with the columns and types of the
Parquet file "ref" (lakelog's own rows, written by the test), so that the
test compares values, not pandas' choice of types. One JSON line on
stdout answers: {"ok": true, "rows": N, ...} or {"ok": false, "error"}.
"""

import json
import sys
import traceback


def to_ref(df, ref_path):
    """The pandas frame df as an Arrow table of the ref file's schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(ref_path)
    cols = []
    for field in schema:
        if field.name not in df.columns:
            raise ValueError(f"column {field.name} missing from the connector's frame {list(df.columns)}")
        col = pa.array(df[field.name], from_pandas=True)
        if pa.types.is_timestamp(field.type) and pa.types.is_integer(col.type):
            # _commit_timestamp of the parquet format: epoch milliseconds.
            col = pa.compute.multiply(col.cast(pa.int64()), 1000).cast(pa.timestamp("us", tz="UTC"))
        if pa.types.is_timestamp(field.type) and pa.types.is_timestamp(col.type) and col.type.tz is None and field.type.tz is not None:
            col = col.cast(pa.timestamp(col.type.unit, tz="UTC"))
        cols.append(col.cast(field.type))
    return pa.Table.from_arrays(cols, schema=schema)


def main():
    req = json.loads(sys.argv[1])
    import delta_sharing

    url = req["profile"] + "#" + req.get("table", "")
    op = req["op"]
    if op == "list":
        client = delta_sharing.SharingClient(req["profile"])
        tables = [f"{t.share}.{t.schema}.{t.name}" for t in client.list_all_tables()]
        return {"tables": tables}
    if op == "version":
        return {"version": delta_sharing.get_table_version(url, starting_timestamp=req.get("starting_timestamp"))}
    if op == "load":
        kw = {}
        for k, arg in (("version", "version"), ("timestamp", "timestamp"), ("limit", "limit"),
                       ("json_predicate", "jsonPredicateHints"), ("use_delta_format", "use_delta_format")):
            if req.get(k) is not None:
                kw[arg] = req[k]
        df = delta_sharing.load_as_pandas(url, **kw)
    elif op == "changes":
        kw = {k: req[k] for k in ("starting_version", "ending_version", "starting_timestamp", "ending_timestamp", "use_delta_format") if req.get(k) is not None}
        df = delta_sharing.load_table_changes_as_pandas(url, **kw)
    else:
        raise ValueError(f"unknown op {op!r}")
    import pyarrow.parquet as pq

    table = to_ref(df, req["ref"])
    pq.write_table(table, req["out"])
    return {"rows": table.num_rows, "columns": list(df.columns)}


if __name__ == "__main__":
    out = sys.stdout
    sys.stdout = sys.stderr  # the connector prints; stdout carries the answer only
    try:
        resp = main()
        resp["ok"] = True
    except Exception as e:
        resp = {"ok": False, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
    out.write(json.dumps(resp) + "\n")
    out.flush()
