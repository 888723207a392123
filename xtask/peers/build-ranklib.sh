#!/usr/bin/env bash
# Build RankLib (the Lemur project's Java learning-to-rank library) from source into one runnable jar, for fixtures
# and benchmarks; never a dependency of the crates, and the jar is never committed.
#
#   xtask/peers/build-ranklib.sh SRC [OUT_JAR]      (OUT_JAR default: target/peers/RankLib.jar)
#   java -jar OUT_JAR -train train.txt -ranker 6 -save model.txt ...
#
# SRC is a RankLib source tree (a folder holding src/main/java, e.g. a clone of codelibs/ranklib) or a git directory
# of one (its HEAD is built). No Maven registry is reachable from the project's machines, so the sources are compiled
# with javac against Debian's commons-math3 (RankLib's one dependency), whose classes go into the jar too; the jar's
# manifest names RankLib's command-line entry point. A missing JDK or commons-math3 is installed with apt-get (root).
set -euo pipefail
if [ $# -lt 1 ]; then
  sed -n '2,11p' "$0" >&2
  exit 2
fi
src=$1
out=${2:-target/peers/RankLib.jar}
math3=/usr/share/java/commons-math3.jar
missing=()
command -v javac >/dev/null && command -v jar >/dev/null || missing+=(default-jdk-headless)
[ -f "$math3" ] || missing+=(libcommons-math3-java)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -d "$src/src/main/java" ]; then
  cp -r "$src/src/main/java" "$work/java"
  revision=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo "unknown revision")
elif git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null; then
  git --git-dir="$src" archive HEAD src/main/java | tar -x -C "$work"
  mv "$work/src/main/java" "$work/java"
  revision=$(git --git-dir="$src" rev-parse HEAD)
else
  echo "$src: neither a RankLib source tree (src/main/java) nor a git directory" >&2
  exit 1
fi
mkdir -p "$work/classes"
find "$work/java" -name '*.java' >"$work/sources"
javac -nowarn -encoding UTF-8 --release 8 -cp "$math3" -d "$work/classes" @"$work/sources"
# commons-math3 inside the jar, so `java -jar` runs it alone (its signatures and manifest left out).
(cd "$work/classes" && jar -xf "$math3" org)
mkdir -p "$(dirname "$out")"
jar --create --file "$out.tmp" --main-class ciir.umass.edu.eval.Evaluator -C "$work/classes" .
mv "$out.tmp" "$out"
echo "built $out from $src ($revision) with $(javac -version 2>&1)"
