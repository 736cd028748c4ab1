"""Spark Structured Streaming's change data feed, for bench/runner's follow
suite: the peer of cdf.Follow's commit-to-delivery latency.

Usage: spark_follow.py TABLE FIRST_VERSION LAST_VERSION OUT_FILE

Starts a local Spark session with Delta (bench/peers/spark.py's), then a
stream `readStream.format("delta").option("readChangeFeed", "true")
.option("startingVersion", FIRST)` with the default trigger (the next
micro-batch as soon as the previous one ends) and foreachBatch, which
collects each batch's change rows and appends "version epoch_seconds" to
OUT_FILE for each _commit_version in it, timed after the rows were
collected. Prints "ready" on stdout once the stream's first micro-batch
(FIRST_VERSION, the table's creation) is done, so the runner starts
committing; ends when LAST_VERSION was delivered.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from spark import start_session  # noqa: E402


def main():
    table, first, last, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    spark, _ = start_session()
    done = {"last": -1}

    def deliver(df, _batch_id):
        rows = df.select("_commit_version").collect()
        now = time.time()
        versions = sorted({r[0] for r in rows})
        with open(out, "a") as f:
            for v in versions:
                f.write(f"{v} {now:.6f}\n")
        if versions:
            done["last"] = max(done["last"], versions[-1])

    q = (
        spark.readStream.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", first)
        .load(table)
        .writeStream.foreachBatch(deliver)
        .option("checkpointLocation", out + ".checkpoint")
        .start()
    )
    # Ready once the stream has started and waits for data (the starting
    # version, the table's creation, holds no rows): its own start-up is
    # not commit-to-delivery latency.
    while q.isActive and (q.status["message"] == "Initializing sources" or q.status["isTriggerActive"]):
        time.sleep(0.05)
    print(f"stream: {q.status['message']}", file=sys.stderr)
    print("ready", flush=True)
    deadline = time.time() + 600
    while done["last"] < last and time.time() < deadline and q.isActive:
        time.sleep(0.05)
    q.stop()
    spark.stop()
    if done["last"] < last:
        print(f"delivered up to {done['last']}, want {last}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
