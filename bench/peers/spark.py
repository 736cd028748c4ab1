"""The Spark side of lakelog's side-by-side benchmarks (bench/runner), for
the operations where Spark is the only peer (DML with deletion vectors:
delta-rs writes none).

Usage: spark.py SPEC_JSON

The same protocol as deltars.py: runs one operation and prints one JSON
line with what it measured (the runner's Outcome). The local Spark session
with Delta (local[2], the configuration of test/interop/peer.py) is started
before the timer; the timer covers the Spark SQL statement only, from
parsing (which resolves the table) to its last row collected.

Peak memory is the JVM's: Spark runs in a java child of this process, so
the VmHWM of /proc/<jvm pid>/status is read just before the outcome is
printed and reported as peak_kb; Python's own VmHWM and the JVM's CPU time
over the measured statement go into "info".

The rows (the MERGE source) come from deltars.py's formulas of
bench/runner/workload, so every engine works on the same data.
"""

import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyarrow as pa  # noqa: E402

from deltars import BATCH_SIZE, DML_MERGE_SHIFT, SCHEMA, dml_source_keys, rows  # noqa: E402


def versions():
    """pyspark's and delta-spark's versions, without starting a JVM."""
    import pyspark
    from importlib.metadata import version

    return pyspark.__version__, version("delta-spark")


def start_session():
    """A local Spark session with Delta, configured as the interop tests'
    (test/interop/peer.py), with the jars from the Ivy cache."""
    from delta import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    scratch = tempfile.mkdtemp(prefix="lakelog-bench-spark-")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("lakelog-bench")
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
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    )
    ivy = os.environ.get("LAKELOG_IVY_DIR")
    if ivy:
        builder = builder.config("spark.jars.ivy", ivy)
    spark = configure_spark_with_delta_pip(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark, scratch


def jvm_pid(spark):
    """The pid of the JVM: pyspark starts spark-submit, which execs
    spark-class, which execs java, so the gateway's process is java."""
    pid = spark.sparkContext._gateway.proc.pid
    exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    if exe != "java":
        raise RuntimeError(f"spark.py: the gateway process {pid} is {exe}, not java")
    return pid


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    """User plus system CPU time of pid (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def op_idle(spec):
    """Versions only; fails when Java or the packages are missing."""
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        raise RuntimeError("spark.py: no java on PATH and no JAVA_HOME: Spark needs Java 17")
    ps, ds = versions()
    return {"seconds": 0, "count": 0, "info": f"Spark {ps} / delta-spark {ds}"}


# The engine's own operationMetrics kept in the outcome (names as lakelog's).
KEEP = ["numAddedFiles", "numRemovedFiles", "numDeletionVectorsAdded", "numTargetFilesAdded",
        "numTargetFilesRemoved", "numTargetDeletionVectorsAdded"]


def quote(path):
    return "delta.`" + path.replace("`", "``") + "`"


def op_dml(spec):
    """DELETE, UPDATE or MERGE in Spark SQL on the table. Setup (untimed):
    start the session, make sure the table has deletion vectors enabled
    (ALTER TABLE ... SET TBLPROPERTIES when it lacks the property; the
    runner's deletion-vector base has it), and for MERGE build the source
    (the rows of dml_source_keys with v + DML_MERGE_SHIFT, as deltars.py)
    as a cached temporary view, and the same statement once on a small
    scratch table (a warm JVM). Measured: the statement, collected.
    "changed" is the rows DESCRIBE HISTORY's operationMetrics say it
    deleted, updated or inserted."""
    op = spec["op"]
    table = quote(os.path.abspath(spec["table"]))
    spark, scratch = start_session()
    pid = jvm_pid(spark)
    props = {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {table}").collect()}
    altered = ""
    if props.get("delta.enableDeletionVectors") != "true":
        spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')").collect()
        altered = "; deletion vectors enabled by ALTER TABLE in the setup"
    if op == "delete":
        stmt = f"DELETE FROM {table} WHERE {spec['predicate']}"
    elif op == "update":
        sets = ", ".join(f"{k} = {v}" for k, v in sorted(spec["set"].items()))
        stmt = f"UPDATE {table} SET {sets} WHERE {spec['predicate']}"
    elif op == "merge":
        keys = dml_source_keys(spec["rows"])
        src = pa.Table.from_batches(
            [rows(keys[i : i + BATCH_SIZE], DML_MERGE_SHIFT) for i in range(0, len(keys), BATCH_SIZE)], schema=SCHEMA
        )
        df = spark.createDataFrame(src.to_pandas(), schema="id long, p string, v double, s string").cache()
        if df.count() != len(keys):
            raise RuntimeError("spark.py: the MERGE source lost rows")
        df.createOrReplaceTempView("source")
        stmt = (f"MERGE INTO {table} AS target USING source ON {spec['predicate']} "
                "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    else:
        raise ValueError(f"unknown op {op}")
    # Warm-up (untimed): the same statement on a small deletion-vector
    # table in the scratch folder, so that the timed one runs in a warm
    # JVM (classes loaded, code compiled), as in a long-lived session.
    warm = quote(os.path.join(scratch, "warmup"))
    spark.sql(f"CREATE TABLE {warm} (id long, p string, v double, s string) USING delta "
              "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')").collect()
    spark.sql(f"INSERT INTO {warm} SELECT id, CAST(id % 10 AS string), (id % 100) / 1000.0, "
              "CAST(id AS string) FROM range(20000)").collect()
    spark.sql(stmt.replace(table, warm, 1)).collect()
    cpu0 = cpu_seconds(pid)
    start = time.perf_counter()
    spark.sql(stmt).collect()
    secs = time.perf_counter() - start
    cpu = cpu_seconds(pid) - cpu0
    h = spark.sql(f"DESCRIBE HISTORY {table} LIMIT 1").collect()[0]
    m = {k: int(v) for k, v in (h["operationMetrics"] or {}).items() if v is not None and v.lstrip("-").isdigit()}
    if op == "delete":
        changed = m.get("numDeletedRows", 0)
    elif op == "update":
        changed = m.get("numUpdatedRows", 0)
    else:
        changed = m.get("numTargetRowsUpdated", 0) + m.get("numTargetRowsInserted", 0)
    out = {"seconds": secs, "count": spec["rows"], "changed": changed, "version": int(h["version"]),
           "metrics": {k: m[k] for k in KEEP if k in m}}
    out["peak_kb"] = status_kb(pid, "VmHWM")
    out["info"] = (f"JVM peak {out['peak_kb'] // 1024} MB (pid {pid}, VmHWM), Python's own "
                   f"{status_kb(os.getpid(), 'VmHWM') // 1024} MB; JVM CPU {cpu:.2f} s over the statement "
                   f"({cpu / max(secs, 1e-9):.1f} cores){altered}")
    spark.stop()
    shutil.rmtree(scratch, ignore_errors=True)
    return out


OPS = {
    "idle": op_idle,
    "delete": op_dml,
    "update": op_dml,
    "merge": op_dml,
}


def main():
    spec = json.loads(sys.argv[1])
    op = OPS.get(spec["op"])
    if op is None:
        print(f"spark.py: op {spec['op']!r} is not measured for Spark", file=sys.stderr)
        return 2
    out = op(spec)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    rc = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)
