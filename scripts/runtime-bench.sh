#!/usr/bin/env bash
# Issue 22's measurements with real `skald serve` processes (docs/benchmarks.md, "One runtime"):
#
#   scripts/runtime-bench.sh parked   sessions parked on approvals: database writes and CPU
#   scripts/runtime-bench.sh load     50 sources sending turns at once: turns/s, overhead per round
#
# Builds this checkout's `skald` (release) and the test harness (release), copies the binary to
# $BENCH_BIN_DIR (default: a temp dir) so other builds sharing the target dir cannot swap it
# mid-run, and runs the ignored measurement tests of crates/skald-cli/tests/suite/one_runtime
# against it. `parked` also measures SKALD_BIN_BEFORE when given (a `skald` built from an
# earlier commit the same way), idle (no session) and with PARKED_SESSIONS parked, alternating
# the builds RUNS times. Knobs: PARKED_SESSIONS (50), PARKED_SECS (60), RUNS (1); LOAD_SOURCES
# (50), LOAD_TURNS (10), LOAD_ROUNDS (3). Loopback only; the data dirs live under $TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."

what=${1:-}
case "$what" in
  parked | load) ;;
  *) echo "usage: $0 parked|load" >&2; exit 2 ;;
esac

bin_dir=${BENCH_BIN_DIR:-$(mktemp -d)}
mkdir -p "$bin_dir"
echo "== building skald and the test harness (release)" >&2
cargo build --release -q -p skald-cli --bin skald
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
after="$bin_dir/skald-$(git rev-parse --short HEAD)"
cp "$target/release/skald" "$after"
harness=$(cargo test --release -p skald-cli --test all --no-run --message-format json 2>/dev/null |
  sed -n 's/.*"executable":"\([^"]*\/deps\/all-[^"]*\)".*/\1/p' | tail -1)
cp "$harness" "$bin_dir/harness"
harness="$bin_dir/harness"

run() { # run BIN TEST: the figures lines of one ignored test against BIN
  SKALD_BENCH=1 SKALD_BIN=$1 "$harness" "$2" --ignored --nocapture --test-threads 1 2>&1 |
    grep -E '^(parked|one source|[0-9]+ sources|ratios)' || {
      echo "failed; rerun: SKALD_BENCH=1 SKALD_BIN=$1 $harness $2 --ignored --nocapture" >&2
      exit 1
    }
}

echo "== $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores" >&2
if [ "$what" = parked ]; then
  builds=("$after")
  [ -n "${SKALD_BIN_BEFORE:-}" ] && builds=("$SKALD_BIN_BEFORE" "$after")
  for _ in $(seq 1 "${RUNS:-1}"); do
    for bin in "${builds[@]}"; do
      for n in 0 "${PARKED_SESSIONS:-50}"; do
        echo "-- $(basename "$bin"), $n parked, load $(cut -d' ' -f1 /proc/loadavg)"
        PARKED_SESSIONS=$n run "$bin" one_runtime::parked
      done
    done
  done
else
  run "$after" one_runtime::load::load_figures
fi
