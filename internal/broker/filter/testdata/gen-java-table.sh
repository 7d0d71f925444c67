#!/bin/sh
# Regenerates sql92_java.txt: Java's verdicts for sql92_exprs.txt over
# sql92_props.txt, from Apache RocketMQ 5.2.0's filter module.
# Needs java (11+) and the 5.2.0 jars (.ci/run fetches them).
set -eu
cd "$(dirname "$0")"
lib="${ROCKETMQ_LIB:-$HOME/.cache/rocketd-bench/rocketmq-5.2.0}"
cp="$lib/rocketmq-filter-5.2.0.jar:$lib/rocketmq-common-5.2.0.jar:$lib/guava-32.0.1-jre.jar:$lib/failureaccess-1.0.1.jar"
java -cp "$cp" java/SqlFilterTable.java sql92_exprs.txt sql92_props.txt > sql92_java.txt.tmp
mv sql92_java.txt.tmp sql92_java.txt
