# Sourced by the scripts in bench/: builds the engine and se-stress on first use (and again
# when sources change), like the `se` launcher does, and defines run_stress_class.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stress_jar="$root/se-stress/target/se-stress.jar"
stress_lib="$root/se-stress/target/lib"
cli_jar="$root/se-cli/target/se-cli.jar"

needs_build() {
  [ -f "$stress_jar" ] && [ -d "$stress_lib" ] && [ -f "$cli_jar" ] || return 0
  [ -n "$(find "$root" -maxdepth 1 -name pom.xml -newer "$stress_jar" -print -quit)" ] && return 0
  [ -n "$(find "$root"/se-*/src/main "$root"/se-*/pom.xml -newer "$stress_jar" -print -quit 2>/dev/null)" ] && return 0
  return 1
}

if [ "${SE_SKIP_BUILD:-}" != "1" ] && needs_build; then
  command -v mvn >/dev/null || { echo "bench: Maven (mvn) is needed to build the engine" >&2; exit 1; }
  echo "bench: building the engine and se-stress (first use or changed sources; takes a minute)..." >&2
  (cd "$root" && mvn -q -B -DskipTests -Dassembly.skipAssembly=true package) >&2 || { echo "bench: build failed" >&2; exit 1; }
  touch "$cli_jar" "$stress_jar"
fi

java_bin="java"
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then java_bin="$JAVA_HOME/bin/java"; fi

# run_stress_class CLASS ARGS...: runs a main class of se-stress (replaces the shell).
run_stress_class() {
  local main="$1"
  shift
  exec "$java_bin" \
    --add-opens=java.base/java.nio=ALL-UNNAMED \
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
    --add-opens=java.base/java.lang=ALL-UNNAMED \
    --add-opens=java.base/java.util=ALL-UNNAMED \
    ${SE_JAVA_OPTS:-} \
    -cp "$stress_jar:$stress_lib/*" "$main" "$@"
}
