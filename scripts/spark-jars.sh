#!/usr/bin/env bash
# Fetch Spark's own Kafka connector (spark-sql-kafka-0-10) for the installed pyspark, with
# the runtime jars it needs that pyspark's own jars directory lacks, from Maven Central into
# a cache outside the repository: the tests run it against the kafkacore broker and the
# Spark benchmark reads Apache Kafka with it.
#
#   scripts/spark-jars.sh            # prints the jar directory as its last stdout line
#   PYTHON=.venv/bin/python scripts/spark-jars.sh
#
# Use:  SparkSession.builder.config("spark.jars", ",".join(sorted(<dir>/*.jar)))
#
# Layout: ${KAFKACORE_CACHE:-$HOME/.cache/kafkacore}/spark-kafka-<spark version>/
#   *.jar        spark-sql-kafka-0-10, spark-token-provider-kafka-0-10, kafka-clients,
#                commons-pool2: every runtime dependency of the connector whose artifact
#                pyspark does not already ship (those are left out: one copy of each class)
#   .complete    marker listing the jars; present only after a complete download
#   .connector   "<connector version> <token provider version>" actually fetched
#
# The connector is fetched at the installed Spark version. When Maven Central does not
# have that version (or the token provider module of it), the pinned pair
# SPARK_KAFKA_FALLBACK ("connector:token-provider", the newest releases of the same major
# line that the project's Maven Central has) is fetched instead, with a warning; such a
# fallback is checked again for the exact version once a day. Needs Java 17+ and Maven.
# Idempotent and quick once cached: nothing is started but `python -c` and `ls`.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z ${PYTHON:-} ]]; then
    if [[ -x $repo/.venv/bin/python ]]; then PYTHON=$repo/.venv/bin/python; else PYTHON=python3; fi
fi
SPARK_KAFKA_FALLBACK=${SPARK_KAFKA_FALLBACK:-4.2.0:4.0.0}

pyspark_home=$("$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))') || {
    echo "spark-jars.sh: $PYTHON cannot import pyspark" >&2
    exit 1
}
spark_jars=$pyspark_home/jars
core=$(cd "$spark_jars" && ls -1 spark-core_*.jar 2>/dev/null | head -n 1)
[[ $core =~ ^spark-core_([0-9.]+)-(.+)\.jar$ ]] || {
    echo "spark-jars.sh: no spark-core_<scala>-<version>.jar in $spark_jars" >&2
    exit 1
}
SCALA_BINARY=${BASH_REMATCH[1]}
SPARK_VERSION=${SPARK_VERSION:-${BASH_REMATCH[2]}}

cache=${KAFKACORE_CACHE:-$HOME/.cache/kafkacore}
dir=$cache/spark-kafka-$SPARK_VERSION
marker=$dir/.complete

complete() {
    [[ -f $marker ]] || return 1
    local jar
    while IFS= read -r jar; do
        [[ -z $jar || -f $dir/$jar ]] || return 1
    done <"$marker"
}

# A fallback in the cache is good for a day; then the exact version is tried again.
stale_fallback() {
    local connector
    read -r connector _ <"$dir/.connector" || return 1
    [[ $connector != "$SPARK_VERSION" && -n $(find "$marker" -mmin +1440) ]]
}

# Artifact ids of the jars pyspark ships (file names are <artifactId>-<version>[-...].jar).
shipped_ids() {
    (cd "$spark_jars" && ls -1 -- *.jar) | sed -E 's/-[0-9][^-]*(-.*)?\.jar$//' | sort -u |
        paste -sd, -
}

# mvn copy-dependencies of one (connector, token provider) pair into $2; fails if Maven
# Central lacks either.
copy_pair() {
    local pair=$1 out=$2 work connector token
    connector=${pair%%:*} token=${pair##*:}
    work=$(mktemp -d "${TMPDIR:-/tmp}/kafkacore-spark-jars.XXXXXX")
    # The token provider is declared on its own (its version may differ from the
    # connector's in a fallback), without its transitive dependencies: the connector's
    # kafka-clients is the one to use.
    cat >"$work/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kafkacore.throwaway</groupId>
  <artifactId>spark-kafka-jars</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.spark</groupId>
      <artifactId>spark-sql-kafka-0-10_$SCALA_BINARY</artifactId>
      <version>$connector</version>
      <exclusions>
        <exclusion>
          <groupId>org.apache.spark</groupId>
          <artifactId>spark-token-provider-kafka-0-10_$SCALA_BINARY</artifactId>
        </exclusion>
      </exclusions>
    </dependency>
    <dependency>
      <groupId>org.apache.spark</groupId>
      <artifactId>spark-token-provider-kafka-0-10_$SCALA_BINARY</artifactId>
      <version>$token</version>
      <exclusions>
        <exclusion>
          <groupId>*</groupId>
          <artifactId>*</artifactId>
        </exclusion>
      </exclusions>
    </dependency>
  </dependencies>
</project>
EOF
    local rc=0
    (cd "$work" && mvn -q -B -Dstyle.color=never dependency:copy-dependencies \
        -DincludeScope=runtime -DexcludeArtifactIds="$(shipped_ids)" \
        -DoutputDirectory="$out" -Dmdep.overWriteReleases=true) >"$work/mvn.log" 2>&1 || rc=$?
    if [[ $rc -ne 0 ]]; then # Maven's first error line, for the report if no pair works
        { grep -m 1 ERROR "$work/mvn.log" || tail -n 3 "$work/mvn.log"; } |
            sed -E 's/\x1b\[[0-9;]*m//g; s/^/    /' >>"$errors"
    fi
    rm -rf "$work"
    [[ $rc -eq 0 && -f $out/spark-sql-kafka-0-10_$SCALA_BINARY-$connector.jar ]] &&
        echo "$connector $token" >"$out/.connector"
}

fetch() {
    command -v mvn >/dev/null || {
        echo "spark-jars.sh: mvn (Maven) is needed to fetch the Spark Kafka connector" >&2
        exit 1
    }
    local staging=$dir.partial pair errors=$dir.errors
    mkdir -p "$cache"
    : >"$errors"
    echo "spark-jars.sh: fetching spark-sql-kafka-0-10_$SCALA_BINARY for Spark $SPARK_VERSION" \
        "into $dir" >&2
    for pair in "$SPARK_VERSION:$SPARK_VERSION" "$SPARK_KAFKA_FALLBACK"; do
        if [[ ${pair%%.*} != "${SPARK_VERSION%%.*}" ]]; then
            continue # a connector of another major line would not load
        fi
        rm -rf "$staging"
        mkdir -p "$staging"
        echo "  connector:token-provider $pair:" >>"$errors"
        if copy_pair "$pair" "$staging"; then
            if [[ $pair != "$SPARK_VERSION:$SPARK_VERSION" ]]; then
                echo "spark-jars.sh: WARNING: Maven Central has no spark-sql-kafka-0-10 (or its" \
                    "token provider) $SPARK_VERSION; using connector ${pair%%:*} with token" \
                    "provider ${pair##*:} (SPARK_KAFKA_FALLBACK)" >&2
            fi
            (cd "$staging" && ls -1 -- *.jar) >"$staging/.complete"
            rm -rf "$dir" "$errors"
            mv "$staging" "$dir"
            return 0
        fi
    done
    rm -rf "$staging"
    # A stale fallback still in the cache beats nothing.
    if complete; then
        rm -f "$errors"
        return 0
    fi
    echo "spark-jars.sh: no Spark Kafka connector for Spark $SPARK_VERSION:" >&2
    cat "$errors" >&2
    rm -f "$errors"
    exit 1
}

if ! complete || stale_fallback; then
    mkdir -p "$cache"
    # One fetcher at a time (parallel test sessions share the cache); flock is optional.
    if command -v flock >/dev/null; then
        exec 9>"$cache/.spark-kafka-$SPARK_VERSION.lock"
        flock 9
    fi
    if ! complete || stale_fallback; then
        fetch
        touch "$marker"
    fi
fi
echo "$dir"
