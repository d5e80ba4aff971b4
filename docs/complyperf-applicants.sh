#!/bin/sh
# complyperf-applicants.sh BIN [FLAGS]: the README's POST /v1/applicants
# figure. Runs complyperf (../shared/perf, or $COMPLYPERF_DIR) against the
# built binary BIN with complyperf-applicants.patch applied to a copy: its
# write phase posts a new individual applicant per request (a new
# externalUserId each) instead of a withdrawal, [kyc] callback_url points
# at the same live receiver, which also checks the callback's signature and
# counts each applicantCreated as it counts transaction.created. Everything
# else (the bare ceiling, reads, e2e, drain, the goals) is complyperf's.
# FLAGS go to complyperf, e.g. -reps 3 -drain 500 -e2e 50.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
perf=${COMPLYPERF_DIR:-$here/../../shared/perf}
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$perf" "$tmp/perf"
cd "$tmp/perf"
git apply -p1 "$here/complyperf-applicants.patch"
go run ./cmd/complyperf -bin "$bin" "$@"
