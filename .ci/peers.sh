# shellcheck shell=bash
# The peer engines the interop tests run: delta-rs (PyPI deltalake) and
# Spark with Delta (PyPI pyspark + delta-spark, Java 17), in a Python venv
# cached under $LAKELOG_CACHE. Source this file, then:
#
#   peers_install   create the venv and install the pinned peers (once)
#   peers_env       export LAKELOG_PYTHON (the venv's python) and the Ivy
#                   cache the Spark session downloads the Delta jars into
#
# The interop tests find the peers through LAKELOG_PYTHON. Under CI a
# missing peer fails the test; outside CI, LAKELOG_SKIP_PEERS=1 skips them.

LAKELOG_CACHE=${LAKELOG_CACHE:-$HOME/.cache/lakelog}
LAKELOG_VENV=${LAKELOG_VENV:-$LAKELOG_CACHE/venv}
# Pinned together: delta-spark 4.4.0 supports pyspark up to 4.2.0, and its
# jars (io.delta:delta-spark_4.2_2.13:4.4.0) are on Maven Central; 4.4.1 is
# on PyPI only, so configure_spark_with_delta_pip could not resolve it.
# matplotlib draws bench/runner's chart (bench/peers/chart.py).
LAKELOG_PEERS=${LAKELOG_PEERS:-"deltalake==1.6.6 pyarrow pandas pyspark==4.2.0 delta-spark==4.4.0 matplotlib==3.11.2"}

# The Iceberg readers of UniForm's interop tests (test/interop
# TestUniform*), in a venv of their own so that pinning them never
# reinstalls the Spark one. A cold install took 3m04s on the loaded
# 2-core machine (no pip cache), 3 s with a warm pip cache.
LAKELOG_ICEBERG_VENV=${LAKELOG_ICEBERG_VENV:-$LAKELOG_CACHE/iceberg-venv}
LAKELOG_ICEBERG_PEERS=${LAKELOG_ICEBERG_PEERS:-"pyiceberg[pyarrow,sql-sqlite]==0.12.0"}

# The Delta Sharing Python connector (test/interop TestSharingPython*),
# in a venv of its own too: delta-sharing 1.4.2 pins pandas<3 and
# pyarrow<=23.0.1, which would move the peers venv's pandas 3 and
# pyarrow 26 under every other interop test. It reads delta-format
# responses through delta-kernel-rust-sharing-wrapper (a wheel). A cold
# install took 31 s on the loaded 2-core machine (wheels in pip's cache).
LAKELOG_SHARING_VENV=${LAKELOG_SHARING_VENV:-$LAKELOG_CACHE/sharing-venv}
LAKELOG_SHARING_PEERS=${LAKELOG_SHARING_PEERS:-"delta-sharing==1.4.2"}

peers_install() {
  iceberg_install
  sharing_install
  local stamp="$LAKELOG_VENV/.lakelog-peers"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$LAKELOG_PEERS" ]; then
    return 0
  fi
  echo "[peers] installing $LAKELOG_PEERS into $LAKELOG_VENV" >&2
  python3 -m venv "$LAKELOG_VENV"
  # shellcheck disable=SC2086
  "$LAKELOG_VENV/bin/pip" install --quiet --disable-pip-version-check $LAKELOG_PEERS
  echo "$LAKELOG_PEERS" > "$stamp"
}

iceberg_install() { venv_install "$LAKELOG_ICEBERG_VENV" "$LAKELOG_ICEBERG_PEERS"; }

# venv_install VENV PEERS: a venv at VENV holding the pip requirements
# PEERS, installed once (a stamp file records what was installed).
venv_install() {
  local venv=$1 peers=$2
  local stamp="$venv/.lakelog-peers"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$peers" ]; then
    return 0
  fi
  echo "[peers] installing $peers into $venv" >&2
  python3 -m venv "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet --disable-pip-version-check $peers
  echo "$peers" > "$stamp"
}

sharing_install() { venv_install "$LAKELOG_SHARING_VENV" "$LAKELOG_SHARING_PEERS"; }

peers_env() {
  export LAKELOG_PYTHON="$LAKELOG_VENV/bin/python"
  export LAKELOG_ICEBERG_PYTHON="$LAKELOG_ICEBERG_VENV/bin/python"
  export LAKELOG_SHARING_PYTHON="$LAKELOG_SHARING_VENV/bin/python"
  export LAKELOG_IVY_DIR="${LAKELOG_IVY_DIR:-$LAKELOG_CACHE/ivy}"
  mkdir -p "$LAKELOG_IVY_DIR"
}
