#!/usr/bin/env bash
# Set up everything jbgui needs on a Debian 12 machine, idempotently; `make setup` calls this.
#
#   1. system packages (a JDK 17 with javac, ASM, the JDK sources used as the javac workload, Xvfb,
#      the libraries Qt draws with, and Python's venv module), installed with apt-get when we are
#      root, else listed and we stop;
#   2. the virtual environment .venv with jbgui installed in editable mode and its dev extras,
#      reinstalled only when pyproject.toml changed (a stamp file in .venv remembers it);
#   3. the agent jar, built by jbgui.agent.build into its cache (a no-op when it is current);
#      then the analyzer's numba kernels compiled into numba's cache (jbgui.model.warmup);
#   4. with --export-tools only (make test-slow): Chromium and speedscope, for the export tests;
#      with --bench-tools only (make bench): jEdit, a workload of the recorder benchmark.
#
# The fast path (everything present) only runs dpkg-query, compares a hash and starts Python
# once, so `make test` pays well under a second for it.
set -euo pipefail

cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=.venv
STAMP="$VENV/.jbgui-setup-stamp"

say() { printf 'setup: %s\n' "$*" >&2; }

# --- 1. system packages --------------------------------------------------------------------------

# Debian packages and why we need them.
declare -A WHY=(
    [openjdk-17-jdk-headless]="javac and java 17"
    [libasm-java]="ASM 9.4 (/usr/share/java/asm*.jar), the agent's bytecode engine"
    [openjdk-17-source]="/usr/lib/jvm/openjdk-17/lib/src.zip, the javac workload of tests and benchmarks"
    [xvfb]="a virtual X server for GUI tests"
    [ant]="Apache Ant, a workload of benchmarks/bench_recorder.py"
    [libjacoco-java]="JaCoCo's agent, the reference cost of benchmarks/bench_recorder.py"
)
# What Qt (PySide6 from PyPI) needs from the system to draw, offscreen or on an X server.
QT_PACKAGES=(libegl1 libgl1 libfontconfig1 libdbus-1-3 libxkbcommon0 libxkbcommon-x11-0 libxcb-cursor0
             libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-randr0 libxcb-render-util0 libxcb-shape0
             libxcb-xfixes0 libxcb-xkb1 fonts-dejavu-core)
for pkg in "${QT_PACKAGES[@]}"; do WHY[$pkg]="a library Qt needs (the explorer's GUI)"; done
PACKAGES=(openjdk-17-jdk-headless libasm-java openjdk-17-source xvfb "${QT_PACKAGES[@]}")
WHY[graphviz]="Graphviz's dot: lays out control-flow graphs (jbtrace cfg --format svg, the explorer's CFG view)"
PACKAGES+=(graphviz)
WHY[ant]="Apache Ant: a workload of the recorder benchmark (benchmarks/bench_recorder.py)"
WHY[libjacoco-java]="JaCoCo's agent: the recorder benchmark's reference cost of instrumentation"
PACKAGES+=(ant libjacoco-java)
WHY[libzstd-jni-java]="zstd-jni: the agent compresses event chunks with zstd (4x faster than zlib, smaller)"
WHY[libzstd-jni1]="zstd-jni's native library (without it the agent falls back to zlib)"
PACKAGES+=(libzstd-jni-java libzstd-jni1)
WHY[junit5]="JUnit 5: the agent's instrumentation classes have unit tests (tests/agent/java, run by tests/agent/test_java_units.py)"
PACKAGES+=(junit5)

package_installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = "installed" ]
}

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
    for pkg in "${PACKAGES[@]}"; do
        package_installed "$pkg" || missing+=("$pkg")
    done
else
    # Not a Debian system: we cannot tell what is installed, so say what is expected and stop.
    say "this is not a Debian system (no dpkg-query); jbgui needs the equivalents of:"
    for pkg in "${PACKAGES[@]}"; do say "  $pkg: ${WHY[$pkg]}"; done
    exit 1
fi

# Python: we need python3 >= 3.11 with a working venv module (Debian splits it into python3-venv).
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    missing+=(python3 python3-venv)
    WHY[python3]="Python 3.11"
    WHY[python3-venv]="python3 -m venv"
elif ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    say "$PYTHON is $("$PYTHON" -V 2>&1); jbgui needs Python >= 3.11 (set PYTHON=/path/to/python3.11)"
    exit 1
elif ! "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    missing+=(python3-venv)
    WHY[python3-venv]="python3 -m venv"
fi

if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        say "missing system packages (cannot install them: $( [ "$(id -u)" -ne 0 ] && echo 'not root' || echo 'no apt-get')):"
        for pkg in "${missing[@]}"; do say "  $pkg: ${WHY[$pkg]}"; done
        say "install them with:"
        say "  sudo apt-get update && sudo apt-get install -y ${missing[*]}"
        exit 1
    fi
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# --- 2. virtual environment ----------------------------------------------------------------------

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c '' >/dev/null 2>&1; then
    say "creating $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
fi

# Reinstall when pyproject.toml (dependencies, entry points, package data) or the interpreter
# changed. Sources need no reinstall: the install is editable.
wanted="$(sha256sum pyproject.toml | cut -d' ' -f1) $("$VENV/bin/python" -V 2>&1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$wanted" ]; then
    say "installing jbgui into $VENV (pip install -e '.[dev]')"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e '.[dev]'
    printf '%s\n' "$wanted" >"$STAMP"
fi

# --- 3. the agent --------------------------------------------------------------------------------

# Prints the jar's path; builds it first when the Java sources or ASM changed.
agent_jar=$("$VENV/bin/python" -m jbgui.agent.build)
say "agent: $agent_jar"

# --- 3b. the analyzer's numba kernels, compiled once into numba's on-disk cache -------------------

# No open of a trace should pay for compiling kernels: record the bundled example once and run
# everything an open runs on it (python -m jbgui.model.warmup). Redone when jbgui/model changes.
warm_wanted="$(find jbgui/model -name "*.py" | sort | xargs cat | sha256sum | cut -d' ' -f1) $("$VENV/bin/python" -V 2>&1)"
WARM_STAMP="$VENV/.jbgui-warmup-stamp"
if [ ! -f "$WARM_STAMP" ] || [ "$(cat "$WARM_STAMP")" != "$warm_wanted" ]; then
    say "compiling the analyzer's kernels into numba's cache (once per change of jbgui/model; about a minute)"
    warm=build/warmup
    rm -rf "$warm"
    mkdir -p "$warm/classes"
    if javac -g -d "$warm/classes" resources/examples/example/*.java \
        && "$VENV/bin/jbtrace" record --force -o "$warm/trace" -- java -cp "$warm/classes" example.Main >/dev/null \
        && "$VENV/bin/python" -m jbgui.model.warmup "$warm/trace"; then
        printf '%s\n' "$warm_wanted" >"$WARM_STAMP"
    else
        say "warning: the kernels were not compiled ahead; the first open of a trace will compile them"
    fi
    rm -rf "$warm"
fi

# A Debian package that only an optional step needs: installed when we are root, else named and we stop.
install_optional() {
    local pkg=$1 why=$2
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing $pkg ($why)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q >/dev/null   # step 1 updates the lists only when it installs something
        apt-get install -y -q --no-install-recommends "$pkg" >/dev/null
    else
        say "$pkg is missing ($why): sudo apt-get install $pkg"
        exit 1
    fi
}

# --- 4. the exports' target tools (only with --export-tools: `make test-slow`) -------------------

# The slow export tests open jbgui's exports in speedscope (npm) running in a headless Chromium
# (Debian), the tool's own importers rather than our reading of the formats.
SPEEDSCOPE_VERSION=1.25.0
SPEEDSCOPE_DIR=build/tools/speedscope-$SPEEDSCOPE_VERSION
if [ "${1:-}" = "--export-tools" ]; then
    command -v chromium >/dev/null 2>&1 || install_optional chromium "the export tests' browser"
    if [ ! -f "$SPEEDSCOPE_DIR/package/dist/release/index.html" ]; then
        if ! command -v npm >/dev/null 2>&1; then
            say "npm is missing: it fetches speedscope for the export tests (sudo apt-get install npm)"
            exit 1
        fi
        say "fetching speedscope $SPEEDSCOPE_VERSION from the npm registry"
        rm -rf "$SPEEDSCOPE_DIR"
        mkdir -p "$SPEEDSCOPE_DIR"
        (cd "$SPEEDSCOPE_DIR" && npm pack --silent "speedscope@$SPEEDSCOPE_VERSION" >/dev/null \
            && tar xzf "speedscope-$SPEEDSCOPE_VERSION.tgz")
    fi
    say "export tools: $(command -v chromium), $SPEEDSCOPE_DIR"
fi

# --- 5. the benchmarks' workloads (only with --bench-tools: `make bench`) -------------------------

# benchmarks/bench_recorder.py times jEdit's start-up (issue 14's target), from Debian's package;
# it says and skips the workload when jEdit is missing, so a fresh machine would report no jEdit.
if [ "${1:-}" = "--bench-tools" ]; then
    package_installed jedit || install_optional jedit "a workload of benchmarks/bench_recorder.py"
    say "bench tools: jedit $(dpkg-query -W -f='${Version}' jedit)"
fi
