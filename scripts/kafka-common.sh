# shellcheck shell=bash
# Shared by scripts/kafka-up, scripts/kafka-down and scripts/kafka-tools. Source it; do not run it.
#
# Environment:
#   KAFKA_VERSION          Kafka version to fetch from Maven Central (default: newest tested 4.x, below)
#   TXNSCOPE_KAFKA_STATE   state directory (default /tmp/txnscope-kafka); kafka-up writes $TXNSCOPE_KAFKA_STATE/env
#   XDG_CACHE_HOME         jar cache root (default ~/.cache): <root>/txnscope/kafka-<version>/libs

KAFKA_SCRIPTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KAFKA_REPO_ROOT="$(cd "$KAFKA_SCRIPTS_DIR/.." && pwd)"
KAFKA_POM="$KAFKA_REPO_ROOT/kafka/pom.xml"
# Newest first. Used only when KAFKA_VERSION is not set: the first that Maven can resolve wins.
KAFKA_DEFAULT_VERSIONS=(4.4.0 4.3.1)
KAFKA_STATE_DIR="${TXNSCOPE_KAFKA_STATE:-/tmp/txnscope-kafka}"
# shellcheck disable=SC2034  # used by the scripts that source this file
KAFKA_ENV_FILE="$KAFKA_STATE_DIR/env"
KAFKA_CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/txnscope"

kafka_log() { printf 'kafka: %s\n' "$*" >&2; }

# kafka_source_env sources this state dir's env file and nothing else: run it in a subshell. A shell
# that sourced another state dir's env still carries its TXNSCOPE_KAFKA_* variables, and what this file
# does not set (a noverify broker it never started) must not be read from those: kafka-down stopped
# the other dir's broker so.
kafka_source_env() {
  local v
  for v in $(compgen -v TXNSCOPE_KAFKA_); do unset "$v"; done
  # shellcheck disable=SC1090
  source "$KAFKA_ENV_FILE"
}
kafka_die() { printf 'kafka: error: %s\n' "$*" >&2; exit 1; }

kafka_require() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 || kafka_die "'$c' not found on PATH (need java 17+ and maven)"
  done
}

# kafka_libs_dir VERSION -> prints the cache dir for that version's jars.
kafka_libs_dir() { printf '%s/kafka-%s/libs' "$KAFKA_CACHE_ROOT" "$1"; }

# kafka_fetch_version VERSION: make sure the classpath for VERSION is in the cache.
# Returns non-zero (without exiting) when Maven cannot resolve it.
kafka_fetch_version() {
  local version="$1" libs pom_sum tmp start
  libs="$(kafka_libs_dir "$version")"
  pom_sum="$(sha256sum "$KAFKA_POM" | cut -d' ' -f1)"
  if [[ -f "$libs/.complete" && "$(cat "$libs/.complete")" == "$pom_sum" ]]; then
    return 0
  fi
  kafka_require mvn java flock
  mkdir -p "$(dirname "$libs")"
  # One fetch at a time per version (kafka-up and kafka-tools may race); re-check under the lock.
  local lockfd
  exec {lockfd}>"$(dirname "$libs")/.fetch.lock"
  flock "$lockfd"
  if [[ -f "$libs/.complete" && "$(cat "$libs/.complete")" == "$pom_sum" ]]; then
    exec {lockfd}>&-
    return 0
  fi
  tmp="$(mktemp -d "$(dirname "$libs")/libs.tmp.XXXXXX")"
  kafka_log "fetching Apache Kafka $version jars from Maven Central into $libs ..."
  start=$SECONDS
  # Maven 3.8 prints bare colour resets even with -B: show its output without escape sequences.
  local ok=1
  mvn -q -B -Dstyle.color=never -f "$KAFKA_POM" -Dkafka.version="$version" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp" >"$tmp.mvn.log" 2>&1 || ok=0
  sed $'s/\x1b\\[[0-9;]*m//g' "$tmp.mvn.log" | grep -v '^[[:space:]]*$' >&2 || true
  rm -f "$tmp.mvn.log"
  if [[ $ok == 0 ]]; then
    rm -rf "$tmp"
    exec {lockfd}>&-
    [[ -d "$libs" ]] || rm -rf "$(dirname "$libs")"
    kafka_log "maven could not resolve Kafka $version"
    return 1
  fi
  ls "$tmp"/kafka_2.13-"$version".jar "$tmp"/kafka-tools-"$version".jar >/dev/null 2>&1 || {
    rm -rf "$tmp"; exec {lockfd}>&-; kafka_log "Kafka $version jars missing after maven run"; return 1; }
  # Kafka 3.x brings its own SLF4J binding (reload4j): keep only the pom's log4j2 one, or SLF4J
  # picks either and warns on every tool's stderr.
  rm -f "$tmp"/slf4j-reload4j-*.jar
  printf '%s\n' "$pom_sum" >"$tmp/.complete"
  rm -rf "$libs"
  mv "$tmp" "$libs"
  exec {lockfd}>&-
  kafka_log "fetched Kafka $version classpath in $((SECONDS - start)) s ($(find "$libs" -name '*.jar' | wc -l) jars)"
}

# kafka_resolve: sets KAFKA_RESOLVED_VERSION and KAFKA_LIBS (fetching if needed); exits on failure.
kafka_resolve() {
  local v
  if [[ -n "${KAFKA_VERSION:-}" ]]; then
    kafka_fetch_version "$KAFKA_VERSION" || kafka_die "cannot fetch Kafka $KAFKA_VERSION"
    KAFKA_RESOLVED_VERSION="$KAFKA_VERSION"
  else
    KAFKA_RESOLVED_VERSION=""
    for v in "${KAFKA_DEFAULT_VERSIONS[@]}"; do
      if kafka_fetch_version "$v"; then KAFKA_RESOLVED_VERSION="$v"; break; fi
      kafka_log "falling back from Kafka $v"
    done
    [[ -n "$KAFKA_RESOLVED_VERSION" ]] || kafka_die "cannot fetch any of Kafka ${KAFKA_DEFAULT_VERSIONS[*]}"
  fi
  KAFKA_LIBS="$(kafka_libs_dir "$KAFKA_RESOLVED_VERSION")"
}

# kafka_tools_log4j DIR: writes a quiet log4j2 config for CLI tools (warnings to stderr), prints its path.
kafka_tools_log4j() {
  local f="$1/tools-log4j2.properties"
  mkdir -p "$1"
  if [[ ! -f "$f" ]]; then
    cat >"$f.tmp.$$" <<'LOG'
status = warn
appender.stderr.type = Console
appender.stderr.name = STDERR
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.stderr.ref = STDERR
LOG
    mv "$f.tmp.$$" "$f"
  fi
  printf '%s' "$f"
}

# kafka_tool_class CLASS: prints CLASS, or for an org.apache.kafka.tools class that this version's
# kafka-tools jar lacks, its Scala predecessor in the broker's jar (kafka.tools.X or kafka.admin.X:
# DumpLogSegments on 4.0 and 3.9, BrokerApiVersionsCommand, ConsoleProducer, AclCommand on 3.9,
# ConfigCommand on 3.9 and 4.0). A jar's central directory keeps entry names uncompressed: grep finds
# them without unzip.
kafka_tool_class() {
  local cls="$1" name pkg
  name="${cls#org.apache.kafka.tools.}"
  if [[ "$name" == "$cls" || "$name" == *.* ]] ||
    grep -qaF "org/apache/kafka/tools/$name.class" "$KAFKA_LIBS"/kafka-tools-*.jar 2>/dev/null; then
    printf '%s' "$cls"; return 0
  fi
  for pkg in kafka/tools kafka/admin; do
    if grep -qaF "$pkg/$name.class" "$KAFKA_LIBS"/kafka_2.13-*.jar 2>/dev/null; then
      printf '%s' "${pkg//\//.}.$name"; return 0
    fi
  done
  printf '%s' "$cls"
}

# kafka_java_tool CLASS ARGS...: runs a Kafka CLI class with the resolved classpath (KAFKA_LIBS must be set).
kafka_java_tool() {
  local cls log4j
  cls="$(kafka_tool_class "$1")"; shift
  log4j="$(kafka_tools_log4j "$KAFKA_LIBS/..")"
  # Short-lived JVMs: C1 only and a small serial heap start fastest.
  # KAFKA_TOOL_TIMEOUT (seconds), when set, bounds the run.
  # shellcheck disable=SC2086
  ${KAFKA_TOOL_TIMEOUT:+timeout "$KAFKA_TOOL_TIMEOUT"} java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$log4j" ${KAFKA_TOOLS_JAVA_OPTS:-} \
    -cp "$KAFKA_LIBS/*" "$cls" "$@"
}

# kafka_pid_is_ours PID MARKER: true when PID is alive and its command line contains MARKER
# (the broker's server.properties path), so a recycled PID is never signalled.
kafka_pid_is_ours() {
  local pid="$1" marker="$2"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$marker"
}

# kafka_node_ids: the node ids of a cluster env (kafka-up --brokers 3: TXNSCOPE_KAFKA_NODE<ID>_CONFIG),
# ascending, one a line; nothing for a single broker. Call it after kafka_source_env.
kafka_node_ids() {
  local v
  for v in $(compgen -v TXNSCOPE_KAFKA_NODE); do
    [[ "$v" =~ ^TXNSCOPE_KAFKA_NODE([0-9]+)_CONFIG$ ]] && echo "${BASH_REMATCH[1]}"
  done | sort -n
}

# kafka_start_jvm CONFIG LOG LOG4J HEAP_OPTS [JAVA_OPTS]: starts a broker JVM (kafka.Kafka CONFIG) in
# the background on $KAFKA_LIBS, its output appended to LOG; sets KAFKA_JVM_PID.
kafka_start_jvm() {
  local cfg="$1" log="$2" log4j="$3" heap="$4" opts="${5:-}"
  # shellcheck disable=SC2086
  nohup java $heap \
    -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
    -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$log4j" $opts \
    -cp "$KAFKA_LIBS/*" kafka.Kafka "$cfg" </dev/null >>"$log" 2>&1 &
  KAFKA_JVM_PID=$!
}

# kafka_port_open PORT: true when something listens on 127.0.0.1:PORT.
kafka_port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# kafka_listed_brokers BOOTSTRAP: prints the ids of the brokers the cluster's metadata lists (alive,
# unfenced), ascending, one a line, as kafka-broker-api-versions.sh finds them; fails when none answers.
# KAFKA_TOOL_TIMEOUT bounds it.
kafka_listed_brokers() {
  local out
  out="$(kafka_java_tool org.apache.kafka.tools.BrokerApiVersionsCommand --bootstrap-server "$1" 2>&1)" || return 1
  sed -nE 's/^[^ ].* \(id: ([0-9]+) rack: .*/\1/p' <<<"$out" | sort -n
}
