#!/bin/sh
# Builds the Java client with the JDK alone (javac at the Java 11 language and API level, as Android's desugared
# library, and jar), and runs its tests with Debian's JUnit 5 (package junit5) when asked:
#
#   clients/java/build.sh [OUT]        OUT/classes, OUT/dpdist-client-VERSION.jar and OUT/dpdist-client-VERSION-sources.jar
#   clients/java/build.sh [OUT] test   the same, then the tests (src/test) with JUnit's console launcher
#
# OUT defaults to clients/java/build.  No download: the JDK and /usr/share/java/junit-platform-console-standalone.jar
# are all it reads besides the sources.  javac and jar run on their JVM's quick compiler alone
# (-XX:TieredStopAtLevel=1): a run this short spends more on the optimizing compiler than it wins (javac of the
# client: 2.8 CPU-s instead of 5.4), and what they write is the same.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/build"}
junit=${JUNIT_JAR:-/usr/share/java/junit-platform-console-standalone.jar}
quick=-J-XX:TieredStopAtLevel=1
version=$(sed -n 's/.*String VERSION = "\([^"]*\)".*/\1/p' "$here/src/main/java/org/dpdist/client/DpDist.java")
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/classes" "$out/test-classes"
mkdir -p "$out/classes" "$out/test-classes"
find "$here/src/main/java" -name '*.java' | sort > "$out/main-sources.txt"
javac $quick --release 11 -Xlint:all -Werror -encoding UTF-8 -d "$out/classes" @"$out/main-sources.txt"
cp "$here/README.md" "$here/LICENSE" "$out/classes/"
jar $quick --create --file "$out/dpdist-client-$version.jar" -C "$out/classes" .
jar $quick --create --file "$out/dpdist-client-$version-sources.jar" -C "$here/src/main/java" . -C "$here" README.md -C "$here" LICENSE
echo "built $out/dpdist-client-$version.jar and $out/dpdist-client-$version-sources.jar"
if [ "${2:-}" = "test" ]; then
    find "$here/src/test/java" -name '*.java' | sort > "$out/test-sources.txt"
    javac $quick --release 11 -encoding UTF-8 -cp "$out/classes:$junit" -d "$out/test-classes" @"$out/test-sources.txt"
    cd "$here"
    java -jar "$junit" --class-path "$out/classes:$out/test-classes" --select-package org.dpdist.client \
        --disable-banner --details=summary --fail-if-no-tests
fi
