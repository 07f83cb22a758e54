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
case "$what" in
  demo)
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build -j"$jobs"
    ./build/whatif demo
    ;;
  test)
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DWHATIF_WERROR=ON >/dev/null
    cmake --build build -j"$jobs"
    ctest --test-dir build --output-on-failure -j"$jobs"
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DWHATIF_WERROR=ON -DWHATIF_SANITIZE=ON >/dev/null
    cmake --build build-asan -j"$jobs"
    WHATIF_ASAN=1 ctest --test-dir build-asan --output-on-failure -j"$jobs" -L unit
    ;;
  build)
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build -j"$jobs"
    ;;
  *) echo "usage: ./setup.sh demo|test|build" >&2; exit 2 ;;
esac
