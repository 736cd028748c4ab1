"""A peer engine worker for lakelog's interop tests.

Run as `python peer.py deltars` or `python peer.py spark`. The worker loads
its engine once (for Spark: one JVM and one SparkSession for its whole life)
and then serves requests: one JSON object per line on stdin, one JSON
response per line on stdout. Everything else the engine prints, the JVM
included, goes to stderr, so stdout carries nothing but responses.

The first line written is a greeting: {"ok": true, "engine": ..., "versions":
{...}} once the engine is ready, or {"ok": false, "missing": true, "error":
...} when the engine cannot be imported (the peer is not installed).

Requests ("op"):

  read   {"path", "version"?, "where"?, "reader"?, "storage_options"?, "out"}
         Read the table (at "version", filtered by the SQL predicate
         "where") and write its rows to the Parquet file "out", columns in
         the table's schema order, in plain Arrow types (no view, large or
         dictionary types; timestamps in microseconds, UTC). delta-rs reads
         with "reader": "pyarrow" (DeltaTable.to_pyarrow_table, the default)
         or "datafusion" (delta-rs's QueryBuilder); Spark with
         spark.read.format("delta") and versionAsOf.
         Response: {"rows", "version", "columns"}.
  write  {"path", "input", "mode", "partition_by"?, "configuration"?,
          "storage_options"?}
         Write the rows of the Parquet file "input" to the table: delta-rs
         write_deltalake, Spark df.write.format("delta") (configuration
         entries become writer options). Response: {"version"}.
  sql    {"statements": [...]} (Spark only) Run each statement; the rows of
         the last one come back as "result" (a list of lists of strings).
  sql_rows {"statements": [...], "keep_going"?} (Spark only) Run each
         statement; every statement's "columns" and "rows" come back as
         "statement_rows", values as JSON (decimals and times as strings,
         maps as objects), with the "seconds" it took. With keep_going a
         failing statement answers {"error"} and the next ones still run.
  query  {"statements": [...], "query", "out"} (Spark only) Run the
         statements, then the query, and write the query's rows to the
         Parquet file "out" as read does. A query Spark refuses answers
         {"ok": true, "error"} with the first line of Spark's message.
  properties {"pairs": [[key, value], ...]} (Spark only) Parse each table
         property value as Delta's DeltaConfigs does (its fromString and
         validation, the stats-columns list with DeltaSqlParserUtils).
         "result" holds one [status, value] per pair: status "ok" with the
         typed value as text, "invalid" with the error, or "unknown" when
         Spark has no such property.
  version {"path", "storage_options"?} The table's latest version.
  changes {"path", "version", "end_version"?, "starting_timestamp"?,
          "ending_timestamp"?, "out"} The change data feed (delta-rs
         load_cdf, Spark readChangeFeed) to "out", the table's columns then
         _change_type, _commit_version, _commit_timestamp.
         Response: {"rows", "version", "columns"}.
  parquet_dataset {"input", "out", "partition_by"?} (delta-rs only) Write
         the rows of the Parquet file "input" as a plain Parquet folder
         "out" with pyarrow.dataset.write_dataset: Hive partition folders
         for "partition_by", several files, several row groups.
         Response: {"rows"}.
  delete {"path", "where"}, update {"path", "where"?, "statements"}
         (delta-rs only) DELETE and UPDATE ("col=expr" assignments).

A failed request answers {"ok": false, "error": ..., "traceback": ...}; the
worker keeps serving.
"""

import json
import os
import sys
import traceback

# Responses go to a private copy of stdout; file descriptor 1 becomes
# stderr, so whatever else writes to it (the JVM, native libraries,
# print) cannot corrupt the protocol.
_proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr


def respond(obj):
    _proto.write(json.dumps(obj) + "\n")
    _proto.flush()


def plain_type(pa, t):
    """The Arrow type t with view, large and dictionary types replaced by
    their plain forms, timestamps in microseconds (UTC when zoned), and
    every nested field nullable: a null struct may hold nulls in a
    non-nullable child, which pyarrow refuses to cast or write otherwise,
    and nullability plays no part in the rows compared."""
    if pa.types.is_dictionary(t):
        return plain_type(pa, t.value_type)
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC" if t.tz is not None else None)
    if pa.types.is_large_list(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t) or pa.types.is_list(t):
        f = t.value_field
        return pa.list_(pa.field("element", plain_type(pa, f.type)))
    if pa.types.is_map(t):
        return pa.map_(
            pa.field("key", plain_type(pa, t.key_field.type), False),
            pa.field("value", plain_type(pa, t.item_field.type)),
        )
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, plain_type(pa, f.type)) for f in t])
    return t


def write_rows(table, columns, out):
    """Write table's columns, in that order and in plain types, to out."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = table.select(columns)
    fields = [pa.field(f.name, plain_type(pa, f.type)) for f in table.schema]
    table = table.cast(pa.schema(fields))
    pq.write_table(table, out)
    return table.num_rows


class DeltaRS:
    name = "deltars"

    def __init__(self):
        import deltalake
        import pyarrow

        self.versions = {"deltalake": deltalake.__version__, "pyarrow": pyarrow.__version__}

    def table(self, req, version=None):
        from deltalake import DeltaTable

        return DeltaTable(req["path"], version=version, storage_options=req.get("storage_options"))

    def read(self, req):
        import pyarrow as pa

        dt = self.table(req, req.get("version"))
        columns = [f.name for f in dt.schema().fields]
        reader = req.get("reader") or "pyarrow"
        if reader == "pyarrow":
            if req.get("where"):
                raise ValueError("the pyarrow reader takes no where predicate")
            table = dt.to_pyarrow_table()
        elif reader == "datafusion":
            from deltalake import QueryBuilder

            sql = "SELECT * FROM t"
            if req.get("where"):
                sql += " WHERE " + req["where"]
            table = pa.table(QueryBuilder().register("t", dt).execute(sql))
        else:
            raise ValueError(f"unknown reader {reader!r}")
        n = write_rows(table, columns, req["out"])
        return {"rows": n, "version": dt.version(), "columns": columns}

    def write(self, req):
        import pyarrow.parquet as pq
        from deltalake import write_deltalake

        data = pq.read_table(req["input"])
        write_deltalake(
            req["path"],
            data,
            mode=req.get("mode") or "append",
            partition_by=req.get("partition_by") or None,
            configuration=req.get("configuration") or None,
            storage_options=req.get("storage_options"),
        )
        return {"version": self.table(req).version()}

    def version(self, req):
        return {"version": self.table(req).version()}

    def parquet_dataset(self, req):
        import pyarrow.dataset as ds
        import pyarrow.parquet as pq

        data = pq.read_table(req["input"])
        opts = ds.ParquetFileFormat().make_write_options(coerce_timestamps="us")
        ds.write_dataset(
            data,
            req["out"],
            format="parquet",
            file_options=opts,
            partitioning=req.get("partition_by") or None,
            partitioning_flavor="hive" if req.get("partition_by") else None,
            max_rows_per_file=max(1, data.num_rows // 3),
            max_rows_per_group=max(1, data.num_rows // 7),
            existing_data_behavior="error",
        )
        return {"rows": data.num_rows}

    def changes(self, req):
        """The change data feed from version to end_version (default the
        latest), by load_cdf."""
        import pyarrow as pa

        dt = self.table(req)
        kw = {"starting_version": int(req.get("version") or 0)}
        if req.get("end_version") is not None:
            kw["ending_version"] = int(req["end_version"])
        table = pa.RecordBatchReader.from_stream(dt.load_cdf(**kw)).read_all()
        columns = [f.name for f in dt.schema().fields] + ["_change_type", "_commit_version", "_commit_timestamp"]
        n = write_rows(table, columns, req["out"])
        return {"rows": n, "version": dt.version(), "columns": columns}

    def delete(self, req):
        """DELETE the rows matching where (delta-rs SQL)."""
        dt = self.table(req)
        dt.delete(req["where"])
        return {"version": self.table(req).version()}

    def update(self, req):
        """UPDATE the rows matching where; statements are "col=expr"
        assignments (delta-rs SQL)."""
        dt = self.table(req)
        updates = dict(a.split("=", 1) for a in req["statements"])
        dt.update(updates=updates, predicate=req.get("where") or None)
        return {"version": self.table(req).version()}


class Spark:
    name = "spark"

    def __init__(self):
        import shutil
        import tempfile

        if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
            raise ImportError("no java on PATH and no JAVA_HOME: Spark needs Java 17")
        import pyspark
        from delta import configure_spark_with_delta_pip
        from pyspark.sql import SparkSession

        scratch = tempfile.mkdtemp(prefix="lakelog-spark-")
        self.scratch = scratch
        builder = (
            SparkSession.builder.master("local[2]")
            .appName("lakelog-interop")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.local.dir", scratch)
            .config("spark.sql.warehouse.dir", os.path.join(scratch, "warehouse"))
            .config("spark.sql.catalogImplementation", "in-memory")
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.default.parallelism", "2")
            .config("spark.databricks.delta.snapshotPartitions", "1")
            # Delta stores dates and timestamps in the proleptic Gregorian
            # calendar. Spark assumes so only for files that Spark 3+ wrote
            # and otherwise refuses values before 1582 (1900 for
            # timestamps); the files of other writers are read as they are.
            .config("spark.sql.parquet.datetimeRebaseModeInRead", "CORRECTED")
            .config("spark.sql.parquet.datetimeRebaseModeInWrite", "CORRECTED")
            .config("spark.sql.parquet.int96RebaseModeInRead", "CORRECTED")
            .config("spark.sql.parquet.int96RebaseModeInWrite", "CORRECTED")
            # Tests are short: the C1 compiler alone starts the JVM in half
            # the time and the serial collector suits a small heap.
            .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        )
        ivy = os.environ.get("LAKELOG_IVY_DIR")
        if ivy:
            builder = builder.config("spark.jars.ivy", ivy)
        self.spark = configure_spark_with_delta_pip(builder).getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")
        import delta

        self.versions = {
            "pyspark": pyspark.__version__,
            "spark": self.spark.version,
            "delta-spark": getattr(delta, "__version__", "") or _dist_version("delta-spark"),
        }

    def read(self, req):
        r = self.spark.read.format("delta")
        if req.get("version") is not None:
            r = r.option("versionAsOf", int(req["version"]))
        df = r.load(req["path"])
        columns = df.columns
        if req.get("where"):
            df = df.where(req["where"])
        n = write_rows(self._arrow(df), columns, req["out"])
        return {"rows": n, "version": self._version(req["path"]), "columns": columns}

    def changes(self, req):
        """table_changes from version to end_version (default the latest),
        or from starting_timestamp to ending_timestamp."""
        r = self.spark.read.format("delta").option("readChangeFeed", "true")
        if req.get("starting_timestamp"):
            r = r.option("startingTimestamp", req["starting_timestamp"])
            if req.get("ending_timestamp"):
                r = r.option("endingTimestamp", req["ending_timestamp"])
        else:
            r = r.option("startingVersion", int(req.get("version") or 0))
            if req.get("end_version") is not None:
                r = r.option("endingVersion", int(req["end_version"]))
        df = r.load(req["path"])
        columns = df.columns
        n = write_rows(self._arrow(df), columns, req["out"])
        return {"rows": n, "version": self._version(req["path"]), "columns": columns}

    def _arrow(self, df):
        """df's rows as a pyarrow Table. DataFrame.toArrow casts to the
        Spark schema's nullability, which fails on a null struct whose
        non-nullable child holds nulls; the collected batches are taken as
        they are."""
        import pyarrow as pa

        collect = getattr(df, "_collect_as_arrow", None)
        if collect is None:
            return df.toArrow()
        batches = collect(empty_list_if_zero_records=False)
        return pa.Table.from_batches(batches)

    def write(self, req):
        df = self.spark.read.parquet(req["input"])
        w = df.write.format("delta").mode(req.get("mode") or "append")
        if req.get("partition_by"):
            w = w.partitionBy(*req["partition_by"])
        for k, v in (req.get("configuration") or {}).items():
            w = w.option(k, v)
        w.save(req["path"])
        return {"version": self._version(req["path"])}

    def sql(self, req):
        result = []
        for stmt in req["statements"]:
            rows = self.spark.sql(stmt).collect()
            result = [[None if v is None else str(v) for v in row] for row in rows]
        return {"result": result}

    def sql_rows(self, req):
        import time

        out = []
        for stmt in req["statements"]:
            start = time.monotonic()
            try:
                df = self.spark.sql(stmt)
                rows = [[_jsonable(v) for v in row] for row in df.collect()]
            except Exception as e:  # noqa: BLE001 (reported, not raised, when asked)
                if not req.get("keep_going"):
                    raise
                out.append({"error": _error_line(e), "seconds": time.monotonic() - start})
                continue
            out.append({"columns": df.columns, "rows": rows, "seconds": time.monotonic() - start})
        return {"statement_rows": out}

    def version(self, req):
        return {"version": self._version(req["path"])}

    def query(self, req):
        for stmt in req.get("statements") or []:
            self.spark.sql(stmt).collect()
        try:
            df = self.spark.sql(req["query"])
            columns = df.columns
            n = write_rows(self._arrow(df), columns, req["out"])
        except Exception as e:  # noqa: BLE001 (the answer compared)
            return {"error": str(e).split("\n")[0]}
        return {"rows": n, "columns": columns}

    def properties(self, req):
        """Each value as DeltaConfigs types it: booleans and integers as
        their text, intervals as "months days micros", enums by name,
        lists comma-joined, the stats-columns list as JSON."""
        jvm = self.spark._jvm
        configs = getattr(jvm.org.apache.spark.sql.delta, "DeltaConfigs$").__getattr__("MODULE$")
        if not hasattr(self, "_configs"):
            self._configs = {}
            for m in configs.getClass().getMethods():
                if m.getParameterCount() == 0 and m.getReturnType().getName() == "org.apache.spark.sql.delta.DeltaConfig":
                    c = m.invoke(configs, None)
                    self._configs[c.key()] = c
        from py4j.java_gateway import get_field

        parse_columns = getattr(jvm.org.apache.spark.sql.delta.util, "DeltaSqlParserUtils$").__getattr__("MODULE$").parseMultipartColumnList

        def render(v):
            cls = v.getClass().getName() if hasattr(v, "getClass") else ""
            if cls.endswith("CalendarInterval"):
                return "%d %d %d" % (get_field(v, "months"), get_field(v, "days"), get_field(v, "microseconds"))
            if cls.startswith("scala.Some"):
                return render(v.get())
            if cls.startswith("scala.collection"):
                return ",".join(str(v.apply(i)) for i in range(v.size()))
            for name in ("name",):
                if hasattr(v, name) and cls and not cls.startswith("java.lang"):
                    try:
                        return str(getattr(v, name)())
                    except Exception:
                        pass
            if isinstance(v, bool):
                return "true" if v else "false"
            return str(v)

        result = []
        for key, value in req["pairs"]:
            c = self._configs.get(key)
            if c is None:
                result.append(["unknown", ""])
                continue
            try:
                typed = c.fromString().apply(value)
                # Validated inside the JVM: py4j would hand a small Long
                # back as an Integer.
                if not c.fromString().andThen(c.validationFunction()).apply(value):
                    result.append(["invalid", c.helpMessage()])
                    continue
            except Exception as e:
                result.append(["invalid", str(e).splitlines()[0]])
                continue
            if key == "delta.dataSkippingStatsColumns":
                cols = parse_columns(value)
                if not cols.isDefined():
                    result.append(["invalid", "does not parse"])
                    continue
                cols = cols.get()
                names = [[cols.apply(i).nameParts().apply(j) for j in range(cols.apply(i).nameParts().size())] for i in range(cols.size())]
                result.append(["ok", json.dumps(names, ensure_ascii=False)])
                continue
            result.append(["ok", render(typed)])
        return {"result": result}

    def _version(self, path):
        from delta.tables import DeltaTable

        h = DeltaTable.forPath(self.spark, path).history(1).select("version").collect()
        return int(h[0][0])


def _error_line(e):
    """The line of an exception that says what went wrong: the first,
    unless it is Py4J's "An error occurred while calling ...", whose next
    line holds the Java exception and its message."""
    lines = [l.strip() for l in str(e).split("\n") if l.strip()]
    if not lines:
        return type(e).__name__
    if lines[0].startswith("An error occurred while calling") and len(lines) > 1:
        return lines[1]
    return lines[0]


def _jsonable(v):
    """A Spark value as JSON: decimals, dates and times as strings, maps
    as objects, structs as objects, bytes in base64."""
    import base64
    import datetime
    import decimal

    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (datetime.datetime, datetime.date)):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(bytes(v)).decode()
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if hasattr(v, "asDict"):
        return {k: _jsonable(x) for k, x in v.asDict().items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return str(v)


def _dist_version(name):
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return ""


ENGINES = {"deltars": DeltaRS, "spark": Spark}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ENGINES:
        respond({"ok": False, "error": "usage: peer.py deltars|spark"})
        return 2
    try:
        engine = ENGINES[sys.argv[1]]()
    except ImportError as e:
        respond({"ok": False, "missing": True, "error": f"{type(e).__name__}: {e}"})
        return 1
    except Exception as e:
        respond({"ok": False, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()})
        return 1
    respond({"ok": True, "engine": engine.name, "versions": engine.versions})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            op = req.get("op")
            if op == "quit":
                respond({"ok": True})
                break
            fn = getattr(engine, op, None) if op in ("read", "write", "sql", "sql_rows", "query", "version", "changes", "delete", "update", "properties", "parquet_dataset") else None
            if fn is None:
                raise ValueError(f"{engine.name} has no op {op!r}")
            resp = fn(req)
            resp["ok"] = True
            respond(resp)
        except Exception as e:
            respond({"ok": False, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()})
    if isinstance(engine, Spark):
        import shutil

        engine.spark.stop()
        shutil.rmtree(engine.scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
