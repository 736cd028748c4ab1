#!/usr/bin/env bash
# The whole CDC pipeline on a laptop: PostgreSQL -> Debezium -> Kafka ->
# bronze -> change feed -> silver, with the tables on local disk or MinIO.
#
#   bash examples/cdcpipeline/run.sh [local|minio]
#
# It installs what is missing (PostgreSQL from Debian's packages, Kafka,
# Kafka Connect and Debezium from Maven Central, MinIO for `minio`; all
# cached under ~/.cache/lakelog), starts the servers on 127.0.0.1 (the
# ports of .ci/pipeline.sh and .ci/services.sh), creates a table
# `customers` in Postgres with a few rows, registers Debezium's connector
# for it, and runs the bronze and silver stages until Ctrl-C, which stops
# everything. Change rows in Postgres meanwhile and watch them arrive.
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-local}
case $mode in local | minio) ;; *)
	echo "usage: $0 [local|minio]" >&2
	exit 2
	;;
esac

# shellcheck source=../../.ci/services.sh
source .ci/services.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/lakelog-pipeline.XXXXXX")
stages=()
cleanup() {
	for pid in "${stages[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
	for pid in "${stages[@]}"; do wait "$pid" 2>/dev/null || true; done
	if [ "$mode" = minio ]; then services_stop; else pipeline_stop "$work/servers"; fi
}
trap cleanup EXIT

if [ "$mode" = minio ]; then
	services_start
	bucket=lakelog-pipeline
	curl -sf -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
		"$AWS_ENDPOINT_URL/$bucket" >/dev/null || true # exists already: fine
	bronze=s3://$bucket/bronze silver=s3://$bucket/silver
else
	pipeline_install
	pipeline_start "$work/servers"
	bronze=$work/bronze silver=$work/silver
fi

psql=(psql -h "$LAKELOG_PG_HOST" -p "$LAKELOG_PG_PORT" -U "$LAKELOG_PG_USER" -d postgres -v ON_ERROR_STOP=1 -q)
"${psql[@]}" <<-'EOF'
	create table if not exists customers (id bigint primary key, name text, balance numeric(10,2), updated_at timestamptz default now());
	insert into customers (id, name, balance) values (1, 'ann', 120.50), (2, 'bob', 80), (3, 'cy', 0) on conflict do nothing;
EOF
curl -sf -X PUT -H 'Content-Type: application/json' "$LAKELOG_CONNECT_URL/connectors/customers/config" --data @- >/dev/null <<-EOF
	{"connector.class": "io.debezium.connector.postgresql.PostgresConnector", "plugin.name": "pgoutput",
	 "database.hostname": "$LAKELOG_PG_HOST", "database.port": "$LAKELOG_PG_PORT", "database.user": "$LAKELOG_PG_USER",
	 "database.password": "unused", "database.dbname": "postgres", "topic.prefix": "pg",
	 "table.include.list": "public.customers", "slot.name": "lakelog_customers", "publication.autocreate.mode": "filtered"}
EOF

go build -o "$work/cdcpipeline" ./examples/cdcpipeline
go build -o "$work/lakelog" ./cmd/lakelog
"$work/cdcpipeline" bronze -table "$bronze" -brokers "$LAKELOG_KAFKA_BROKERS" -topic pg.public.customers -instance-id laptop >"$work/bronze.log" 2>&1 &
stages+=($!)
"$work/cdcpipeline" silver -bronze "$bronze" -table "$silver" -key id >"$work/silver.log" 2>&1 &
stages+=($!)

cat <<-EOF

	The pipeline runs (logs: $work/bronze.log, $work/silver.log). In another shell:

	  ${psql[*]} -c "update customers set balance = balance + 10 where id = 1"
	  ${psql[*]} -c "alter table customers add column email text"
	  ${psql[*]} -c "insert into customers (id, name, email) values (4, 'dee', 'dee@example.com')"
	  $work/lakelog scan $silver
	  $work/lakelog changes $silver --follow --from 0

	Ctrl-C stops the stages and the servers.
EOF
wait "${stages[@]}"
