#!/usr/bin/env bash
# One llama.cpp build for both engines of the embedded model (docs/embedded-model.md): llama-cpp-python's wheel
# and llama.cpp's llama-server come out of one CMake tree, so libggml and libllama are compiled once and both
# engines run the very same machine code.
#
#   scripts/build_llama.sh wheel    the llama-cpp-python wheel (its shared libraries: libggml*, libllama)
#   scripts/build_llama.sh server   llama-server, linked against those same shared libraries (adds the server's
#                                   own sources to the tree the wheel was built in; builds the wheel first if
#                                   the tree is not there)
#
# The source is llama-cpp-python's sdist (the llama.cpp it vendors) with scripts/native/*.patch applied; the
# patches touch the server's sources only, so the wheel's libraries are llama.cpp's own. Everything lives in
# $DEST (the Makefile's cache directory, keyed by version, compiler options and patches): wheel/*.whl,
# llama-server with the shared libraries beside it (found through its $ORIGIN run path), build.log (the
# compiler's progress, which `make demo` shows while it waits). The CMake tree is kept until both products are
# there, then removed. Environment: PIP, LLAMA_VERSION, LLAMA_CMAKE_ARGS, SERVER_CMAKE_ARGS, PATCHES, DEST.
set -euo pipefail
what=${1:?usage: scripts/build_llama.sh wheel|server}
: "${PIP:?}" "${LLAMA_VERSION:?}" "${LLAMA_CMAKE_ARGS:?}" "${SERVER_CMAKE_ARGS:?}" "${DEST:?}"
PATCHES=${PATCHES:-}
SRC=$DEST/src
TREE=$DEST/build
LOG=$DEST/build.log

PATH="$(dirname "$PIP"):$PATH"
mkdir -p "$DEST"
exec 9>"$DEST.lock"
flock 9  # a second `make` waits for the first instead of building beside it

wheel_built() { compgen -G "$DEST/wheel/llama_cpp_python-*.whl" >/dev/null; }
server_built() { [[ -x $DEST/llama-server ]]; }

prepare_source() {
  [[ -d $SRC ]] && return
  echo "llama.cpp: fetching llama-cpp-python $LLAMA_VERSION's source" >>"$LOG"
  rm -rf "$DEST/download" "$SRC.new" && mkdir -p "$DEST/download" "$SRC.new"
  "$PIP" download -q --no-deps --no-binary llama-cpp-python -d "$DEST/download" "llama-cpp-python==$LLAMA_VERSION"
  tar xzf "$DEST/download/llama_cpp_python-$LLAMA_VERSION.tar.gz" -C "$SRC.new" --strip-components 1
  for patch in $PATCHES; do
    patch -s -p1 -d "$SRC.new/vendor/llama.cpp" <"$patch"
  done
  rm -rf "$DEST/download"
  mv "$SRC.new" "$SRC"
}

build_wheel() {
  prepare_source
  # scikit-build-core configures and builds in $TREE (kept: the server is added to it later) with the cmake and
  # ninja it finds on PATH; the tree names them, so they must outlive pip's build environment: the system's,
  # else PyPI's installed into the venv.
  if ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then
    "$PIP" install -q cmake ninja
  fi
  rm -rf "$DEST/wheel.new"
  echo "llama.cpp: building llama-cpp-python $LLAMA_VERSION (libggml, libllama)" >>"$LOG"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "$PIP" wheel -v --no-deps --no-cache-dir -w "$DEST/wheel.new" \
    --config-settings=build-dir="$TREE" "$SRC" >>"$LOG" 2>&1 \
    || { tail -30 "$LOG" >&2; echo "llama.cpp: the wheel's build failed; the log: $LOG" >&2; exit 1; }
  rm -rf "$DEST/wheel" && mv "$DEST/wheel.new" "$DEST/wheel"
}

tree_usable() {
  # the tree names the cmake and the build tool that made it; pip's build environment is gone after the wheel
  local cache=$TREE/CMakeCache.txt
  [[ -f $cache ]] || return 1
  local tool
  for tool in $(sed -n 's/^\(CMAKE_COMMAND\|CMAKE_MAKE_PROGRAM\):[A-Z]*=//p' "$cache"); do
    [[ -x $tool ]] || return 1
  done
}

build_server() {
  if ! tree_usable; then
    rm -rf "$TREE"
    build_wheel
  fi
  local cmake
  cmake=$(sed -n 's/^CMAKE_COMMAND:[A-Z]*=//p' "$TREE/CMakeCache.txt")
  echo "llama.cpp: adding llama-server to the same tree" >>"$LOG"
  # the server's options on top of the wheel's cached ones; $ORIGIN: the binary finds the shared libraries
  # copied beside it
  # shellcheck disable=SC2086,SC2016
  { "$cmake" -Wno-dev -S "$SRC" -B "$TREE" $SERVER_CMAKE_ARGS -DCMAKE_BUILD_RPATH='$ORIGIN' \
      && "$cmake" --build "$TREE" --target llama-server; } >>"$LOG" 2>&1 \
    || { tail -30 "$LOG" >&2; echo "llama.cpp: llama-server's build failed; the log: $LOG" >&2; exit 1; }
  rm -rf "$DEST/server.new" && mkdir -p "$DEST/server.new"
  cp -a "$TREE"/bin/llama-server "$TREE"/bin/*.so* "$DEST/server.new/"
  if ldd "$DEST/server.new/llama-server" | grep -q "not found"; then
    ldd "$DEST/server.new/llama-server" >&2
    echo "llama.cpp: llama-server does not find its libraries" >&2
    exit 1
  fi
  mv "$DEST/server.new"/* "$DEST/" && rmdir "$DEST/server.new"
}

case $what in
  wheel) wheel_built || build_wheel ;;
  server) server_built || build_server ;;
  *) echo "usage: scripts/build_llama.sh wheel|server" >&2; exit 2 ;;
esac
if wheel_built && server_built; then
  rm -rf "$TREE" "$SRC"  # both products are out: the tree's objects are not needed again
fi
