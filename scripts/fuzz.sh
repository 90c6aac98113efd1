#!/usr/bin/env bash
# `make fuzz`: builds herdr-fuzz with libFuzzer and AddressSanitizer and runs every target (or
# those in FUZZ_TARGETS) for FUZZ_RUNS executions each (default 1,000,000), from the committed
# seed corpus (Fuzz/corpus/TARGET) and dictionary (Fuzz/dict/TARGET.dict, when there is one).
# New inputs go to .build/fuzz/corpus/TARGET, findings to .build/fuzz/findings/, each target's
# log to .build/fuzz/logs/. Prints a Markdown row per target (executions, exec/s, coverage,
# findings) and exits 1 if any target found something. `make test` runs it with FUZZ_RUNS=3000
# and FUZZ_SEED=1.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${FUZZ_RUNS:-1000000}
# 0: a random seed each run (long runs explore); make test fixes it, so its short runs are the
# same on every machine and a finding there is the code's, not the dice's.
seed=${FUZZ_SEED:-0}
build=.build/fuzz
mkdir -p "$build"
echo "Building herdr-fuzz with -sanitize=fuzzer,address (in $build)"
swift build -c release --build-path "$build" --product herdr-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
  -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld >"$build/build.log" 2>&1 || {
  tail -40 "$build/build.log" >&2
  echo "error: the fuzz build failed (whole log: $build/build.log)" >&2
  exit 1
}
binary=$build/release/herdr-fuzz
mkdir -p "$build/corpus" "$build/findings" "$build/logs"

# Swift's crash backtracer would wait for a terminal; libFuzzer and ASan report the finding.
export SWIFT_BACKTRACE=enable=no
targets=${FUZZ_TARGETS:-$(HERDR_FUZZ_TARGET=list "$binary")}
found=0
echo "| target | executions | exec/s | coverage (edges) | features | findings |"
echo "|---|---|---|---|---|---|"
for target in $targets; do
  seeds=Fuzz/corpus/$target
  work=$build/corpus/$target
  mkdir -p "$work"
  options=(-runs="$runs" -seed="$seed" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1
    -artifact_prefix="$build/findings/$target-")
  [ -f "Fuzz/dict/$target.dict" ] && options+=(-dict="Fuzz/dict/$target.dict")
  log=$build/logs/$target.log
  corpora=("$work")
  [ -d "$seeds" ] && corpora+=("$seeds")
  status=0
  HERDR_FUZZ_TARGET=$target "$binary" "${options[@]}" "${corpora[@]}" </dev/null >"$log" 2>&1 || status=$?
  # A finding while the seeds replay leaves no stats: each field may be missing.
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1 || true)
  coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
  features=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
  if [ "$status" -ne 0 ]; then
    found=1
    finding=$(grep -o "$build/findings/$target-[a-z]*-[0-9a-f]*" "$log" | tail -1 || true)
    echo "| $target | ${executions:-?} | ${speed:-?} | ${coverage:-?} | ${features:-?} | **${finding:-exit $status}** (log: $log) |"
  else
    echo "| $target | ${executions:-?} | ${speed:-?} | ${coverage:-?} | ${features:-?} | none |"
  fi
done
exit $found
