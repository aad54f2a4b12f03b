#!/bin/sh
# Installs the Debian 12 packages icppd needs to build, test and
# benchmark, when any is missing.  Idempotent: a second run installs
# nothing and does not touch the network.
set -e
# graphviz is not icppd's: the quick start's "go tool pprof -http" draws
# its call graphs with its dot.
pkgs="build-essential autoconf automake pkg-config libpfm4-dev libdwarf-dev
libelf-dev libsqlite3-dev sqlite3 binutils procps util-linux
libprotobuf-c-dev protobuf-c-compiler zlib1g-dev libcapstone-dev libiberty-dev
libcurl4-openssl-dev libdebuginfod-dev graphviz"
[ "${1:-}" = bench ] && pkgs="$pkgs linux-perf xz-utils bzip2 time python3 dpkg-dev clickhouse-server clickhouse-client golang-go clang"
# Test-only (the demo needs none of it): clang and its runtime build
# the libFuzzer harnesses.  The consumers the test suite checks exports
# with: the Go pprof parser,
# node + npm for speedscope (npm installs speedscope itself; a machine
# with node from elsewhere keeps it), and ClickHouse, whose servers the
# fleet tests start on loopback ports of their own.  The flame graph
# test draws the SVG with rsvg-convert and runs its script in headless
# chromium (xmllint checks the XML).  debuginfod serves a split debug
# file on a loopback port.  rustc builds a Rust program whose names the
# reports must demangle.  GNU time measures a report's peak memory.
if [ "${1:-}" = test ]; then
	pkgs="$pkgs golang-go golang-github-google-pprof-dev clickhouse-server
clickhouse-client librsvg2-bin chromium libxml2-utils clang libclang-rt-14-dev
debuginfod time rustc linux-perf"
	command -v npm >/dev/null || pkgs="$pkgs nodejs npm"
fi
missing=
for p in $pkgs; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "icppd: installing:$missing (apt-get; a few minutes on a fresh machine)" >&2
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
