#!/bin/sh
# setup.sh — install missing Debian packages, build whatif, then run the demo or the tests.
#   ./setup.sh demo    install + build + `whatif demo` on the bundled workloads (the main job)
#   ./setup.sh test    install + build (warnings are errors) + every test, then the test
#                      suite again under AddressSanitizer + UndefinedBehaviorSanitizer
#   ./setup.sh build   install + build only
set -eu
cd "$(dirname "$0")"
what=${1:-demo}

PKGS="cmake make gcc pkg-config lua5.4 liblua5.4-dev libsqlite3-dev libcapstone-dev \
libzstd-dev libcmocka-dev libelf-dev libdw-dev liblzma-dev qemu-user"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

jobs=$(nproc 2>/dev/null || echo 2)

# The Release build in ./build; profile-guided with WHATIF_PGO=1 in the environment: an
# instrumented whatif runs bench/pgo_train.sh (records the bundled workloads at test size, runs
# the model, Gus and MFIR on them), then the libraries and whatif are built with that profile.
# Same results (the tests run on it); hot paths laid out together (far fewer host
# instruction-cache misses), 0-9% faster as measured (README), for ~80 s more build time, so
# it is not the default. Falls back to a plain build if the training fails.
release_build() { # -DWHATIF_WERROR=ON|OFF
  pgo=""
  if [ "${WHATIF_PGO:-0}" = 1 ]; then
    rm -rf build/pgo-profile
    # (the instrumented build is not held to -Werror: instrumentation makes GCC warn falsely)
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DWHATIF_WERROR=OFF -DWHATIF_PGO=generate >/dev/null
    cmake --build build -j"$jobs" --target whatif whatif_plugin workloads
    if bench/pgo_train.sh build/whatif build/workloads build/pgo-train; then
      pgo=use
    else
      echo "setup: the profile-guided training failed; building without a profile" >&2
    fi
  fi
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" -DWHATIF_PGO=$pgo >/dev/null
  cmake --build build -j"$jobs"
}

case "$what" in
  demo)
    release_build -DWHATIF_WERROR=OFF
    ./build/whatif demo
    ;;
  test)
    release_build -DWHATIF_WERROR=ON
    ctest --test-dir build --output-on-failure -j"$jobs"
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DWHATIF_WERROR=ON -DWHATIF_SANITIZE=ON >/dev/null
    cmake --build build-asan -j"$jobs"
    WHATIF_ASAN=1 ctest --test-dir build-asan --output-on-failure -j"$jobs" -L unit
    ;;
  build)
    release_build -DWHATIF_WERROR=OFF
    ;;
  *) echo "usage: ./setup.sh demo|test|build" >&2; exit 2 ;;
esac
