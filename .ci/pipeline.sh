# shellcheck shell=bash
# The CDC pipeline's servers: PostgreSQL (Debian's packages) with logical
# replication on, a Kafka broker in KRaft mode and Kafka Connect with
# Debezium's Postgres connector (jars from Maven Central, pinned in
# .ci/pipeline/*.xml). Sourced by .ci/services.sh, which calls:
#
#   pipeline_install   install PostgreSQL when missing, copy the pinned jars
#                      into $LAKELOG_CACHE/pipeline (once)
#   pipeline_start DIR start the three on 127.0.0.1 with data under DIR,
#                      wait until they answer, export their environment
#   pipeline_stop DIR  stop them
#
# Ports (LAKELOG_PG_PORT, LAKELOG_KAFKA_PORT and the controller's one
# above it, LAKELOG_CONNECT_PORT) stay clear of MinIO 9000/9001, GCS 4443
# and Azurite 10000. Exported for the tests: LAKELOG_PG_HOST,
# LAKELOG_PG_PORT, LAKELOG_PG_USER, LAKELOG_KAFKA_BROKERS,
# LAKELOG_CONNECT_URL, LAKELOG_PIPELINE_JARS (the cached jars).

LAKELOG_CACHE=${LAKELOG_CACHE:-$HOME/.cache/lakelog}
LAKELOG_PG_PORT=${LAKELOG_PG_PORT:-15432}
LAKELOG_KAFKA_PORT=${LAKELOG_KAFKA_PORT:-19092}
LAKELOG_CONNECT_PORT=${LAKELOG_CONNECT_PORT:-18083}
_LAKELOG_PIPELINE_POMS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/pipeline"

_pipeline_log() { printf '[pipeline] %s\n' "$*" >&2; }

# _pipeline_pgbin: the newest installed PostgreSQL's bin folder.
_pipeline_pgbin() {
	ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

# _pipeline_jars NAME [EXCLUDE]: copy the runtime jars of
# .ci/pipeline/NAME.xml (less the artifact ids EXCLUDE, comma separated)
# into the cache, unless the cached copy was made from the same pom.
_pipeline_jars() {
	local name=$1 exclude=${2:-} pom=$_LAKELOG_PIPELINE_POMS/$1.xml dir=$LAKELOG_CACHE/pipeline/$1
	local sum
	sum=$(sha256sum "$pom" | cut -d' ' -f1)
	if [ "$(cat "$dir/.pom.sha256" 2>/dev/null)" = "$sum" ]; then
		return 0
	fi
	_pipeline_log "copying the jars of $name from Maven Central"
	rm -rf "$dir" && mkdir -p "$dir" || return 1
	mvn -B -q -Dstyle.color=never -f "$pom" -Dmaven.repo.local="$LAKELOG_CACHE/m2" \
		dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dir" \
		${exclude:+-DexcludeArtifactIds=$exclude} >&2 || {
		_pipeline_log "mvn could not fetch the jars of $name"
		return 1
	}
	printf '%s\n' "$sum" >"$dir/.pom.sha256"
}

pipeline_install() {
	if [ -z "$(_pipeline_pgbin)" ]; then
		_pipeline_log "installing PostgreSQL from Debian's packages"
		apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2 || {
			_pipeline_log "apt-get install postgresql failed"
			return 1
		}
	fi
	command -v java >/dev/null && command -v mvn >/dev/null || {
		_pipeline_log "Java 17 and Maven are needed for Kafka and Kafka Connect"
		return 1
	}
	# The broker and the worker need their whole classpath; the plugin
	# folder leaves out what Connect provides.
	_pipeline_jars kafka && _pipeline_jars connect &&
		_pipeline_jars debezium connect-api,kafka-clients,slf4j-api
}

# _pipeline_wait NAME CHECK PID LOG: run CHECK until it succeeds, for up to
# 120 s, failing early when PID died.
_pipeline_wait() {
	local name=$1 check=$2 pid=$3 log=$4 i
	for ((i = 0; i < 600; i++)); do
		if eval "$check" >/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 0.2
	done
	_pipeline_log "$name did not start; the end of its log:"
	tail -n 30 "$log" >&2
	return 1
}

pipeline_start() {
	local dir=$1 pgbin cache=$LAKELOG_CACHE/pipeline port
	for port in "$LAKELOG_PG_PORT" "$LAKELOG_KAFKA_PORT" "$((LAKELOG_KAFKA_PORT + 1))" "$LAKELOG_CONNECT_PORT"; do
		_services_port_free "$port" || return 1
	done
	pgbin=$(_pipeline_pgbin)
	mkdir -p "$dir/kafka" "$dir/connect/plugins" "$dir/pg" || return 1
	# PostgreSQL refuses to run as root: its folder belongs to postgres,
	# who must be able to reach it through DIR and its parent (the
	# services' folder, which mktemp made 700).
	chmod a+x "$dir" "$(dirname "$dir")"
	chown postgres "$dir/pg"
	runuser -u postgres -- "$pgbin/initdb" -D "$dir/pg/data" -U postgres --auth=trust -E UTF8 --no-sync \
		>"$dir/pg/initdb.log" 2>&1 || {
		_pipeline_log "initdb failed:"
		tail -n 20 "$dir/pg/initdb.log" >&2
		return 1
	}
	runuser -u postgres -- "$pgbin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/postgres.log" -w -t 60 \
		-o "-c port=$LAKELOG_PG_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir/pg -c wal_level=logical -c max_replication_slots=16 -c max_wal_senders=16 -c fsync=off" \
		start >/dev/null || {
		_pipeline_log "PostgreSQL did not start:"
		tail -n 20 "$dir/pg/postgres.log" >&2
		return 1
	}

	# Kafka: one process that is both broker and controller. The cluster id
	# is base64url("lakelog-pipeline"): the storage is new each time.
	cat >"$dir/kafka/server.properties" <<-EOF
		process.roles=broker,controller
		node.id=1
		controller.quorum.voters=1@127.0.0.1:$((LAKELOG_KAFKA_PORT + 1))
		listeners=PLAINTEXT://127.0.0.1:$LAKELOG_KAFKA_PORT,CONTROLLER://127.0.0.1:$((LAKELOG_KAFKA_PORT + 1))
		advertised.listeners=PLAINTEXT://127.0.0.1:$LAKELOG_KAFKA_PORT
		controller.listener.names=CONTROLLER
		listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
		inter.broker.listener.name=PLAINTEXT
		log.dirs=$dir/kafka/data
		num.partitions=1
		offsets.topic.replication.factor=1
		transaction.state.log.replication.factor=1
		transaction.state.log.min.isr=1
		share.coordinator.state.topic.replication.factor=1
		share.coordinator.state.topic.min.isr=1
		group.initial.rebalance.delay.ms=0
		auto.create.topics.enable=true
	EOF
	local jvm=(java -Xmx512m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC)
	"${jvm[@]}" -cp "$cache/kafka/*" kafka.tools.StorageTool format -t bGFrZWxvZy1waXBlbGluZQ \
		-c "$dir/kafka/server.properties" >"$dir/kafka/format.log" 2>&1 || {
		_pipeline_log "formatting Kafka's storage failed:"
		tail -n 20 "$dir/kafka/format.log" >&2
		return 1
	}
	"${jvm[@]}" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$cache/kafka/*" kafka.Kafka "$dir/kafka/server.properties" \
		>"$dir/kafka/kafka.log" 2>&1 </dev/null &
	printf '%s\n' $! >"$dir/kafka.pid"

	# Kafka Connect, distributed mode (its configs, offsets and status in
	# Kafka topics), with Debezium as a plugin.
	cp -r "$cache/debezium" "$dir/connect/plugins/debezium"
	cat >"$dir/connect/worker.properties" <<-EOF
		bootstrap.servers=127.0.0.1:$LAKELOG_KAFKA_PORT
		group.id=lakelog-connect
		listeners=http://127.0.0.1:$LAKELOG_CONNECT_PORT
		key.converter=org.apache.kafka.connect.json.JsonConverter
		value.converter=org.apache.kafka.connect.json.JsonConverter
		config.storage.topic=lakelog-connect-configs
		offset.storage.topic=lakelog-connect-offsets
		status.storage.topic=lakelog-connect-status
		config.storage.replication.factor=1
		offset.storage.replication.factor=1
		status.storage.replication.factor=1
		offset.flush.interval.ms=1000
		plugin.path=$dir/connect/plugins
	EOF
	_pipeline_wait kafka "(exec 3<>/dev/tcp/127.0.0.1/$LAKELOG_KAFKA_PORT)" "$(cat "$dir/kafka.pid")" "$dir/kafka/kafka.log" || return 1
	"${jvm[@]}" -Dorg.slf4j.simpleLogger.defaultLogLevel=info -cp "$cache/connect/*" \
		org.apache.kafka.connect.cli.ConnectDistributed "$dir/connect/worker.properties" \
		>"$dir/connect/connect.log" 2>&1 </dev/null &
	printf '%s\n' $! >"$dir/connect.pid"
	_pipeline_wait kafka-connect "curl -sf http://127.0.0.1:$LAKELOG_CONNECT_PORT/connector-plugins | grep -q PostgresConnector" \
		"$(cat "$dir/connect.pid")" "$dir/connect/connect.log" || return 1

	export LAKELOG_PG_HOST=127.0.0.1 LAKELOG_PG_PORT LAKELOG_PG_USER=postgres
	export LAKELOG_KAFKA_BROKERS="127.0.0.1:$LAKELOG_KAFKA_PORT"
	export LAKELOG_CONNECT_URL="http://127.0.0.1:$LAKELOG_CONNECT_PORT"
	# The jars, for tests that run a Connect worker of their own.
	export LAKELOG_PIPELINE_JARS="$cache"
	_pipeline_log "PostgreSQL :$LAKELOG_PG_PORT, Kafka :$LAKELOG_KAFKA_PORT, Kafka Connect :$LAKELOG_CONNECT_PORT are up; logs in $dir"
}

pipeline_stop() {
	local dir=$1 name pid i
	[ -n "$dir" ] && [ -d "$dir" ] || return 0
	for name in connect kafka; do
		pid=$(cat "$dir/$name.pid" 2>/dev/null) || continue
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 150; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [ -f "$dir/pg/data/postmaster.pid" ]; then
		runuser -u postgres -- "$(_pipeline_pgbin)/pg_ctl" -D "$dir/pg/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	unset LAKELOG_PG_HOST LAKELOG_PG_USER LAKELOG_KAFKA_BROKERS LAKELOG_CONNECT_URL LAKELOG_PIPELINE_JARS
}
