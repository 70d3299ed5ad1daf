#!/usr/bin/env bash
# Fetch S3Proxy (org.gaul:s3proxy, Apache-2.0), the S3-compatible object store the tiered
# storage tests, `make cluster TIERED=1` and the tiering benches run, from Maven Central
# into a cache outside the repository.
#
#   scripts/s3proxy.sh           # prints the jar's path as its last stdout line
#   S3PROXY_VERSION=4.1.0 scripts/s3proxy.sh
#
# Layout: ${KAFKACORE_CACHE:-$HOME/.cache/kafkacore}/s3proxy-<version>/s3proxy.jar
#   (the release's self-contained jar-with-dependencies; run it with
#    java -jar s3proxy.jar --properties <file>, see tests/support/object_store.py)
#
# Why S3Proxy (docs/tiered-storage.md): a real S3 REST server (SigV4, ranged GET, multipart
# upload, ListObjectsV2, DeleteObjects) over a local directory (jclouds' filesystem-nio2
# provider), one jar from Maven Central that runs on the Java 17 the Kafka jars need
# already, and up in a few seconds; MinIO is AGPL and SeaweedFS takes many minutes to build
# from the Go proxy on two cores.
#
# Needs only Java 17+ and Maven (mvn). Idempotent and quick once cached.
set -euo pipefail

S3PROXY_VERSION=${S3PROXY_VERSION:-4.1.0}
cache=${KAFKACORE_CACHE:-$HOME/.cache/kafkacore}
home=$cache/s3proxy-$S3PROXY_VERSION
jar=$home/s3proxy.jar

fetch() {
    command -v mvn >/dev/null || {
        echo "s3proxy.sh: mvn (Maven) is needed to fetch S3Proxy" >&2
        exit 1
    }
    local repo
    repo=$(mktemp -d "${TMPDIR:-/tmp}/kafkacore-s3proxy.XXXXXX")
    # shellcheck disable=SC2064  # expand now: the trap must remove this very directory
    trap "rm -rf '$repo'" EXIT
    echo "s3proxy.sh: fetching S3Proxy $S3PROXY_VERSION into $home" >&2
    mvn -q -B -Dstyle.color=never -Dmaven.repo.local="$repo" dependency:copy \
        -Dartifact="org.gaul:s3proxy:$S3PROXY_VERSION:jar:jar-with-dependencies" \
        -DoutputDirectory="$repo/out" -Dmdep.stripVersion=true >&2
    local got=$repo/out/s3proxy-jar-with-dependencies.jar
    [[ -f $got ]] || {
        echo "s3proxy.sh: mvn did not produce the S3Proxy jar" >&2
        exit 1
    }
    mkdir -p "$home"
    mv -f "$got" "$jar.partial"
    mv -f "$jar.partial" "$jar"
}

if [[ ! -f $jar ]]; then
    mkdir -p "$cache"
    # One fetcher at a time (parallel test sessions share the cache); flock is optional.
    if command -v flock >/dev/null; then
        exec 9>"$cache/.s3proxy-$S3PROXY_VERSION.lock"
        flock 9
    fi
    [[ -f $jar ]] || fetch
fi
echo "$jar"
