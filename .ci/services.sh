# shellcheck shell=bash
# Object-store servers for the cloud store tests: MinIO (S3), fake-gcs-server
# (GCS) and Azurite (Azure Blob); and the CDC pipeline's PostgreSQL, Kafka
# and Kafka Connect with Debezium (.ci/pipeline.sh). Source this file, then:
#
#   services_install   build or install the servers into the cache (once)
#   services_start     install if needed, start all three on 127.0.0.1 with
#                      fresh data folders, wait until they answer, and export
#                      the environment the tests read
#   services_stop      stop them and remove their data folders
#
# Binaries and packages are cached under $LAKELOG_CACHE (default
# ~/.cache/lakelog), so only the first run on a machine builds anything.
# Ports can be moved with LAKELOG_MINIO_PORT, LAKELOG_GCS_PORT and
# LAKELOG_AZURITE_PORT.

LAKELOG_CACHE=${LAKELOG_CACHE:-$HOME/.cache/lakelog}
LAKELOG_MINIO_VERSION=${LAKELOG_MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}
LAKELOG_FAKEGCS_VERSION=${LAKELOG_FAKEGCS_VERSION:-v1.56.1}
LAKELOG_AZURITE_VERSION=${LAKELOG_AZURITE_VERSION:-3.37.0}
LAKELOG_MINIO_PORT=${LAKELOG_MINIO_PORT:-9000}
LAKELOG_GCS_PORT=${LAKELOG_GCS_PORT:-4443}
LAKELOG_AZURITE_PORT=${LAKELOG_AZURITE_PORT:-10000}

# The well-known Azurite development account (public, documented by Microsoft).
_LAKELOG_AZURITE_ACCOUNT=devstoreaccount1
_LAKELOG_AZURITE_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

# shellcheck source=.ci/pipeline.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline.sh"

_services_log() { printf '[services] %s\n' "$*" >&2; }

# _services_go_install NAME MODULE VERSION: go install MODULE@VERSION into
# the cache unless the cached binary NAME was built from that version.
_services_go_install() {
	local name=$1 module=$2 version=$3 bin=$LAKELOG_CACHE/bin
	local stamp=$bin/$name.version
	if [ -x "$bin/$name" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$module@$version" ]; then
		return 0
	fi
	mkdir -p "$bin"
	_services_log "building $module@$version (first run on this machine; minio takes minutes on 2 cores)"
	(cd "${TMPDIR:-/tmp}" && GOBIN=$bin GOFLAGS=-buildvcs=false go install "$module@$version") || {
		_services_log "go install $module@$version failed"
		return 1
	}
	printf '%s\n' "$module@$version" >"$stamp"
}

_services_install_azurite() {
	local dir=$LAKELOG_CACHE/azurite
	if [ -x "$dir/node_modules/.bin/azurite-blob" ] &&
		[ "$(cat "$dir/version" 2>/dev/null)" = "$LAKELOG_AZURITE_VERSION" ]; then
		return 0
	fi
	mkdir -p "$dir"
	_services_log "installing azurite@$LAKELOG_AZURITE_VERSION with npm"
	(cd "$dir" && npm install --no-audit --no-fund --loglevel=error "azurite@$LAKELOG_AZURITE_VERSION" >&2) || {
		_services_log "npm install azurite failed"
		return 1
	}
	printf '%s\n' "$LAKELOG_AZURITE_VERSION" >"$dir/version"
}

services_install() {
	# The two Go builds share 2 cores badly with npm's downloads, so they run
	# one after the other; npm runs meanwhile.
	local azurite_pid pipeline_pid rc=0
	_services_install_azurite &
	azurite_pid=$!
	pipeline_install &
	pipeline_pid=$!
	_services_go_install minio github.com/minio/minio "$LAKELOG_MINIO_VERSION" || rc=1
	_services_go_install fake-gcs-server github.com/fsouza/fake-gcs-server "$LAKELOG_FAKEGCS_VERSION" || rc=1
	wait "$azurite_pid" || rc=1
	wait "$pipeline_pid" || rc=1
	return $rc
}

# _services_wait NAME URL PID: poll URL until it answers, for up to 60 s,
# failing early if the server's process PID died.
_services_wait() {
	local name=$1 url=$2 pid=$3 i
	for ((i = 0; i < 300; i++)); do
		if curl -s -o /dev/null --max-time 2 "$url"; then
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 0.2
	done
	_services_log "$name did not start; the end of its log:"
	tail -n 30 "$LAKELOG_SERVICES_DIR/$name.log" >&2
	return 1
}

# _services_port_free PORT: fail when something already listens on PORT.
_services_port_free() {
	if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
		_services_log "port $1 on 127.0.0.1 is taken; stop what listens there or move the port (LAKELOG_*_PORT)"
		return 1
	fi
}

services_start() {
	if [ -n "${LAKELOG_SERVICES_DIR:-}" ] && [ -d "$LAKELOG_SERVICES_DIR" ]; then
		_services_log "already started in $LAKELOG_SERVICES_DIR"
		return 0
	fi
	services_install || return 1
	_services_port_free "$LAKELOG_MINIO_PORT" || return 1
	_services_port_free "$((LAKELOG_MINIO_PORT + 1))" || return 1
	_services_port_free "$LAKELOG_GCS_PORT" || return 1
	_services_port_free "$LAKELOG_AZURITE_PORT" || return 1
	LAKELOG_SERVICES_DIR=$(mktemp -d "${TMPDIR:-/tmp}/lakelog-services.XXXXXX") || return 1
	export LAKELOG_SERVICES_DIR
	local dir=$LAKELOG_SERVICES_DIR bin=$LAKELOG_CACHE/bin
	mkdir -p "$dir/minio" "$dir/gcs" "$dir/azurite"

	# Each server is one process (node runs Azurite), whose id is kept for
	# services_stop.
	MINIO_ROOT_USER=minioadmin MINIO_ROOT_PASSWORD=minioadmin \
		MINIO_BROWSER=off MINIO_UPDATE=off MINIO_CI_CD=1 \
		"$bin/minio" server "$dir/minio" --quiet \
		--address "127.0.0.1:$LAKELOG_MINIO_PORT" \
		--console-address "127.0.0.1:$((LAKELOG_MINIO_PORT + 1))" \
		>"$dir/minio.log" 2>&1 </dev/null &
	printf '%s\n' $! >"$dir/minio.pid"

	"$bin/fake-gcs-server" -scheme http -host 127.0.0.1 -port "$LAKELOG_GCS_PORT" \
		-public-host "127.0.0.1:$LAKELOG_GCS_PORT" -external-url "http://127.0.0.1:$LAKELOG_GCS_PORT" \
		-backend filesystem -filesystem-root "$dir/gcs" -log-level warn \
		>"$dir/fake-gcs-server.log" 2>&1 </dev/null &
	printf '%s\n' $! >"$dir/fake-gcs-server.pid"

	# Never without --disableTelemetry.
	"$LAKELOG_CACHE/azurite/node_modules/.bin/azurite-blob" \
		--blobHost 127.0.0.1 --blobPort "$LAKELOG_AZURITE_PORT" \
		--location "$dir/azurite" --disableTelemetry --skipApiVersionCheck \
		>"$dir/azurite.log" 2>&1 </dev/null &
	printf '%s\n' $! >"$dir/azurite.pid"

	local ok=0
	_services_wait minio "http://127.0.0.1:$LAKELOG_MINIO_PORT/minio/health/ready" "$(cat "$dir/minio.pid")" || ok=1
	_services_wait fake-gcs-server "http://127.0.0.1:$LAKELOG_GCS_PORT/storage/v1/b" "$(cat "$dir/fake-gcs-server.pid")" || ok=1
	_services_wait azurite "http://127.0.0.1:$LAKELOG_AZURITE_PORT/" "$(cat "$dir/azurite.pid")" || ok=1
	pipeline_start "$dir/pipeline" || ok=1
	if [ $ok -ne 0 ]; then
		services_stop
		return 1
	fi
	# A bucket for ad-hoc use; the tests make their own.
	curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
		--data '{"name":"lakelog"}' "http://127.0.0.1:$LAKELOG_GCS_PORT/storage/v1/b?project=lakelog" ||
		_services_log "could not create the GCS bucket lakelog"

	export AWS_ENDPOINT_URL="http://127.0.0.1:$LAKELOG_MINIO_PORT"
	export AWS_ACCESS_KEY_ID=minioadmin
	export AWS_SECRET_ACCESS_KEY=minioadmin
	export AWS_REGION=us-east-1
	export AWS_EC2_METADATA_DISABLED=true
	export AWS_ALLOW_HTTP=true # for delta-rs, which refuses http:// endpoints without it
	export STORAGE_EMULATOR_HOST="127.0.0.1:$LAKELOG_GCS_PORT"
	export AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=$_LAKELOG_AZURITE_ACCOUNT;AccountKey=$_LAKELOG_AZURITE_KEY;BlobEndpoint=http://127.0.0.1:$LAKELOG_AZURITE_PORT/$_LAKELOG_AZURITE_ACCOUNT;"
	_services_log "MinIO, fake-gcs-server and Azurite are up; data and logs in $dir"
}

# _services_alive PID: the process runs (a zombie that its parent has not
# reaped yet does not count).
_services_alive() {
	local stat
	stat=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	[[ $stat != Z* ]]
}

services_stop() {
	local dir=${LAKELOG_SERVICES_DIR:-} name pid i
	[ -n "$dir" ] && [ -d "$dir" ] || return 0
	pipeline_stop "$dir/pipeline"
	for name in minio fake-gcs-server azurite; do
		pid=$(cat "$dir/$name.pid" 2>/dev/null) || continue
		kill -TERM "$pid" 2>/dev/null || true
	done
	for name in minio fake-gcs-server azurite; do
		pid=$(cat "$dir/$name.pid" 2>/dev/null) || continue
		for ((i = 0; i < 100; i++)); do
			_services_alive "$pid" || break
			sleep 0.1
		done
		if _services_alive "$pid"; then
			_services_log "$name ignored SIGTERM; killing it"
			kill -KILL "$pid" 2>/dev/null || true
		fi
		wait "$pid" 2>/dev/null || true # reap it when this shell started it
	done
	rm -rf "$dir"
	unset LAKELOG_SERVICES_DIR AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY \
		AWS_REGION AWS_EC2_METADATA_DISABLED AWS_ALLOW_HTTP STORAGE_EMULATOR_HOST \
		AZURE_STORAGE_CONNECTION_STRING
}
