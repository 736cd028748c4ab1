#!/usr/bin/env bash
# The whole CDC pipeline on a laptop: PostgreSQL -> Debezium -> Kafka ->
# bronze -> change feed -> silver, with the tables on local disk or MinIO.
#
#   bash examples/cdcpipeline/run.sh [local|minio] [TABLE...]
#
# TABLEs are tables of the postgres database (schema.table or table, in
# public); without any, a demo table `customers` is created with a few
# rows. It installs what is missing (PostgreSQL from Debian's packages,
# Kafka, Kafka Connect and Debezium from Maven Central, MinIO for `minio`;
# all cached under ~/.cache/lakelog), starts the servers on 127.0.0.1 (the
# ports of .ci/pipeline.sh and .ci/services.sh), registers Debezium's
# connector for the tables (schemas on, transaction metadata, truncates,
# a heartbeat), writes pipeline.yaml and runs `lakelog cdc run` until
# Ctrl-C, which stops everything. See README.md beside this script.
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-local}
case $mode in local | minio) ;; *)
	echo "usage: $0 [local|minio] [TABLE...]" >&2
	exit 2
	;;
esac
shift || true
tables=("$@")

# shellcheck source=../../.ci/services.sh
source .ci/services.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/lakelog-pipeline.XXXXXX")
pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill -INT "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	if [ "$mode" = minio ]; then services_stop; else pipeline_stop "$work/servers"; fi
}
trap cleanup EXIT

if [ "$mode" = minio ]; then
	services_start
	bucket=lakelog-pipeline
	curl -sf -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
		"$AWS_ENDPOINT_URL/$bucket" >/dev/null || true # exists already: fine
	root=s3://$bucket
else
	pipeline_install
	pipeline_start "$work/servers"
	root=$work
fi

psql=(psql -h "$LAKELOG_PG_HOST" -p "$LAKELOG_PG_PORT" -U "$LAKELOG_PG_USER" -d postgres -v ON_ERROR_STOP=1 -q)
if [ ${#tables[@]} -eq 0 ]; then
	"${psql[@]}" <<-'EOF'
		create table if not exists customers (id bigint primary key, name text, balance numeric(10,2), updated_at timestamptz default now());
		insert into customers (id, name, balance) values (1, 'ann', 120.50), (2, 'bob', 80), (3, 'cy', 0) on conflict do nothing;
	EOF
	tables=(customers)
fi
include=
for t in "${tables[@]}"; do
	case $t in *.*) ;; *) t=public.$t ;; esac
	include=${include:+$include,}$t
done
curl -sf -X PUT -H 'Content-Type: application/json' "$LAKELOG_CONNECT_URL/connectors/pg/config" --data @- >/dev/null <<-EOF
	{"connector.class": "io.debezium.connector.postgresql.PostgresConnector", "plugin.name": "pgoutput",
	 "database.hostname": "$LAKELOG_PG_HOST", "database.port": "$LAKELOG_PG_PORT", "database.user": "$LAKELOG_PG_USER",
	 "database.password": "unused", "database.dbname": "postgres", "topic.prefix": "pg",
	 "table.include.list": "$include", "slot.name": "lakelog_pg", "publication.name": "lakelog_pg",
	 "publication.autocreate.mode": "filtered",
	 "key.converter": "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "true",
	 "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "true",
	 "provide.transaction.metadata": "true", "skipped.operations": "none", "heartbeat.interval.ms": "10000"}
EOF

{
	echo "brokers: [$LAKELOG_KAFKA_BROKERS]"
	echo "connect: $LAKELOG_CONNECT_URL"
	echo "connector: pg"
	echo "variable_numeric: string"
	echo "tables:"
	for t in ${include//,/ }; do
		echo "  - {topic: pg.$t, bronze: $root/bronze/$t, silver: $root/silver/$t}"
	done
} >"$work/pipeline.yaml"

go build -o "$work/lakelog" ./cmd/lakelog
"$work/lakelog" cdc run --config "$work/pipeline.yaml" 2>"$work/pipeline.log" &
pid=$!

cat <<-EOF

	The pipeline runs (config: $work/pipeline.yaml, log: $work/pipeline.log). In another shell:

	  ${psql[*]} -c "update ${tables[0]} set ... where ..."
	  $work/lakelog cdc status --config $work/pipeline.yaml
	  $work/lakelog scan $root/silver/${include%%,*}
	  $work/lakelog changes $root/silver/${include%%,*} --follow --from 0

	Ctrl-C stops the pipeline and the servers.
EOF
wait "$pid"
