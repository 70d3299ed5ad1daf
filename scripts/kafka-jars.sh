#!/usr/bin/env bash
# Fetch Apache Kafka's own jars (broker, storage, tools, clients and every runtime
# dependency) from Maven Central into a cache outside the repository, for the interop
# tests and the side-by-side benches.
#
#   scripts/kafka-jars.sh            # prints the libs directory as its last stdout line
#   KAFKA_VERSION=4.3.1 scripts/kafka-jars.sh
#
# Layout: ${KAFKACORE_CACHE:-$HOME/.cache/kafkacore}/kafka-<version>/
#   libs/              every jar: run a tool with  java -cp "<libs>/*" <main class> ...
#   bin/kafka-run-class  the same as a launcher:  kafka-run-class kafka.tools.DumpLogSegments ...
#   libs/.complete     marker listing the jars; present only after a complete download
#   kafka-shell (kafka-metadata-shell) and what it needs beyond the broker's jars (jline) are
#   added to libs/ afterwards when missing, so an existing cache gains them without a refetch
#
# Needs only Java 17+ and Maven (mvn). Idempotent and quick once cached: when the marker
# is there and every jar it lists exists, nothing is downloaded and mvn is not started.
set -euo pipefail

# The newest Kafka 4.x release on Maven Central when this was written (checked with mvn
# resolving kafka-clients [4.0.0,5.0.0)). Override with KAFKA_VERSION.
KAFKA_VERSION=${KAFKA_VERSION:-4.3.1}
SCALA_BINARY=${SCALA_BINARY:-2.13}
SLF4J_VERSION=${SLF4J_VERSION:-1.7.36}

cache=${KAFKACORE_CACHE:-$HOME/.cache/kafkacore}
home=$cache/kafka-$KAFKA_VERSION
libs=$home/libs
marker=$libs/.complete

complete() {
    [[ -f $marker ]] || return 1
    local jar
    while IFS= read -r jar; do
        [[ -z $jar || -f $libs/$jar ]] || return 1
    done <"$marker"
}

write_launcher() {
    mkdir -p "$home/bin"
    local launcher=$home/bin/kafka-run-class
    cat >"$launcher.tmp" <<EOF
#!/usr/bin/env bash
# kafka-run-class for Kafka $KAFKA_VERSION jars fetched by kafkacore's scripts/kafka-jars.sh.
# Logging goes to stderr (slf4j-simple), warnings and above only; KAFKA_OPTS adds JVM flags.
exec java \${KAFKA_OPTS:-} -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \\
    -cp "$libs/*" "\$@"
EOF
    chmod +x "$launcher.tmp"
    mv -f "$launcher.tmp" "$launcher"
}

fetch() {
    command -v mvn >/dev/null || {
        echo "kafka-jars.sh: mvn (Maven) is needed to fetch the Kafka jars" >&2
        exit 1
    }
    local work
    work=$(mktemp -d "${TMPDIR:-/tmp}/kafkacore-kafka-jars.XXXXXX")
    # shellcheck disable=SC2064  # expand now: the trap must remove this very directory
    trap "rm -rf '$work'" EXIT

    local deps="" artifact
    for artifact in "kafka_$SCALA_BINARY" kafka-clients kafka-storage kafka-storage-api kafka-tools \
        kafka-tools-api kafka-server-common kafka-server kafka-group-coordinator kafka-metadata \
        kafka-raft kafka-transaction-coordinator; do
        deps+="
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>$artifact</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>"
    done
    # Kafka's own jars leave the slf4j binding to the distribution. slf4j-simple, of the
    # slf4j-api line Kafka depends on (1.7), logs to stderr: tools print only their output
    # on stdout.
    cat >"$work/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kafkacore.throwaway</groupId>
  <artifactId>kafka-jars</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>$deps
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-simple</artifactId>
      <version>$SLF4J_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
    echo "kafka-jars.sh: fetching Apache Kafka $KAFKA_VERSION jars into $libs" >&2
    local staging=$home/libs.partial
    rm -rf "$staging"
    mkdir -p "$home"
    (cd "$work" && mvn -q -B -Dstyle.color=never dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$staging" -Dmdep.overWriteReleases=true) >&2
    [[ -f $staging/kafka_$SCALA_BINARY-$KAFKA_VERSION.jar ]] || {
        echo "kafka-jars.sh: mvn did not produce kafka_$SCALA_BINARY-$KAFKA_VERSION.jar" >&2
        exit 1
    }
    (cd "$staging" && ls -1 -- *.jar) >"$staging/.complete"
    rm -rf "$libs"
    mv "$staging" "$libs"
}

# kafka-metadata-shell's artifact and the jars it adds (jline), copied into libs/ beside
# the others without replacing any (the libs directory may be in use by other runs).
# Only for Kafka 4 (the KRaft tests use it; 3.x caches stay as they are).
shell_jar=$libs/kafka-shell-$KAFKA_VERSION.jar
[[ $KAFKA_VERSION == 3.* ]] && shell_jar=$marker
fetch_shell() {
    local work
    work=$(mktemp -d "${TMPDIR:-/tmp}/kafkacore-kafka-shell.XXXXXX")
    # shellcheck disable=SC2064  # expand now: the trap must remove this very directory
    trap "rm -rf '$work'" EXIT
    cat >"$work/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kafkacore.throwaway</groupId>
  <artifactId>kafka-shell-jars</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka-shell</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
    echo "kafka-jars.sh: fetching kafka-shell $KAFKA_VERSION into $libs" >&2
    (cd "$work" && mvn -q -B -Dstyle.color=never dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$work/jars") >&2
    local jar name
    for jar in "$work"/jars/*.jar; do
        name=${jar##*/}
        if [[ ! -f $libs/$name ]]; then
            cp "$jar" "$libs/.$name.tmp"
            mv -f "$libs/.$name.tmp" "$libs/$name"
            echo "$name" >>"$marker"
        fi
    done
}

if ! complete || [[ ! -f $shell_jar ]]; then
    mkdir -p "$cache"
    # One fetcher at a time (parallel test sessions share the cache); flock is optional.
    if command -v flock >/dev/null; then
        exec 9>"$cache/.kafka-$KAFKA_VERSION.lock"
        flock 9
    fi
    complete || fetch
    [[ -f $shell_jar ]] || fetch_shell
fi
[[ -x $home/bin/kafka-run-class ]] || write_launcher
echo "$libs"
