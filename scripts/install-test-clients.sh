#!/usr/bin/env bash
# Install the third-party Kafka clients used by tests/compat (the client compatibility
# suite), each in its own directory so that incompatible versions can coexist.
#
#   scripts/install-test-clients.sh     # prints "name=dir" lines, one per Python client
#
#   kcat                       Debian package `kcat` (librdkafka), apt-get if missing
#   kafka-python 2.x and 3.x   pip --target ${KAFKACORE_CACHE:-~/.cache/kafkacore}/pyclients/<name>-<version>/
#   aiokafka (latest)          the same, with its compression extras
#
# Run a client with PYTHONPATH=<dir>. Idempotent: a directory with a .complete marker is
# reused without touching the network. PYTHON picks the interpreter (default: the repo's
# .venv, else python3); the clients are pure Python or ship wheels for it.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${KAFKACORE_CACHE:-$HOME/.cache/kafkacore}
if [[ -z ${PYTHON:-} ]]; then
    if [[ -x $repo/.venv/bin/python ]]; then PYTHON=$repo/.venv/bin/python; else PYTHON=python3; fi
fi

# name|version|pip requirements (compression libraries each client imports)
CLIENTS=(
    "kafka-python|2.0.2|kafka-python==2.0.2 python-snappy lz4 zstandard"
    "kafka-python|2.3.3|kafka-python==2.3.3 python-snappy lz4 zstandard"
    "kafka-python|3.0.12|kafka-python==3.0.12 python-snappy lz4 zstandard"
    "aiokafka|0.14.0|aiokafka[snappy,lz4,zstd]==0.14.0"
)

if ! command -v kcat >/dev/null; then
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    echo "install-test-clients: installing kcat (apt-get)" >&2
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq kcat >&2
fi

pyver=$("$PYTHON" -c 'import sys; print("py%d%d" % sys.version_info[:2])')
for entry in "${CLIENTS[@]}"; do
    IFS='|' read -r name version reqs <<<"$entry"
    dir=$cache/pyclients/$name-$version-$pyver
    if [[ ! -f $dir/.complete ]]; then
        echo "install-test-clients: installing $name $version into $dir" >&2
        rm -rf "$dir.tmp"
        # shellcheck disable=SC2086  # reqs is a word list on purpose
        "$PYTHON" -m pip install -q --disable-pip-version-check --no-warn-script-location \
            --target "$dir.tmp" $reqs >&2
        rm -rf "$dir"
        mv "$dir.tmp" "$dir"
        echo "$reqs" >"$dir/.complete"
    fi
    echo "$name-$version=$dir"
done
