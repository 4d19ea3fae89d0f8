"""Build the recording agent from the Java sources shipped inside this package.

The agent is three jars, laid side by side in one directory:

``jbgui-agent.jar``
    Only ``jbgui.agent.Premain`` and the manifest. It is what ``-javaagent:`` names; it is put on
    the system class path by the JVM, so it must stay tiny and depend on nothing.
``jbgui-runtime.jar``
    ``jbgui.runtime`` and ``jbgui.output``: the code instrumented classes call and the trace
    writer. Premain appends it to the *bootstrap* class path, because instrumented JDK classes
    (defined by the bootstrap loader) must be able to call it.
``jbgui-engine.jar``
    The instrumentation engine (``jbgui.agent``, ``jbgui.instr``) together with ASM. Premain loads
    it in an isolated class loader whose parent is the bootstrap loader, so the agent's ASM never
    meets a program's own copy of ASM. It also holds the chunk codec (``jbgui.zstd``) and zstd-jni,
    which ``jbgui.agent.CodecModule`` loads as a named module of their own (native access on JDK 24+).

Jars are built with :mod:`zipfile`; only ``javac`` is needed. The output directory is keyed by a
hash of the sources and of the ASM jars, so a changed source rebuilds and an unchanged one is
reused. ``python -m jbgui.agent.build`` builds (if needed) and prints the agent jar's path.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

JAVA_SOURCES = Path(__file__).resolve().parent / "java"
AGENT_JAR = "jbgui-agent.jar"
RUNTIME_JAR = "jbgui-runtime.jar"
ENGINE_JAR = "jbgui-engine.jar"
# The ASM modules the engine uses; Debian's libasm-java installs them here.
ASM_MODULES = ("asm", "asm-tree", "asm-analysis", "asm-commons", "asm-util")
DEFAULT_ASM_DIR = Path("/usr/share/java")
# The oldest JDK the recorder supports is 17 (it uses Class.isHidden, JDK 15+).
JAVA_RELEASE = "17"
# Sources that use JDK internals, and the exports they are compiled with. ThreadObjects reads
# Thread fields with Unsafe. The probes' runtime (Tracer, ThreadTrace, ThreadRegistry) marks the
# probes' slow paths (a full buffer's hand-off to the writer, a receiver class missing from the
# thread's cache, a thread's first event) @jdk.internal.vm.annotation.DontInline, which HotSpot
# honours in classes of the bootstrap loader, where the runtime is defined. Without it C2 inlined
# the whole hand-off into every probe of every hot method (its call site runs thousands of times,
# so the JIT rated it hot): in a traced javac String.charAt compiled to 190 KB of machine code in
# 1.7 s, HashMap.getNode in 4.5 s (JFR's jdk.Compilation events).
JDK_INTERNAL_SOURCES = ("jbgui/runtime/ThreadObjects.java", "jbgui/runtime/Tracer.java",
                        "jbgui/runtime/ThreadTrace.java", "jbgui/runtime/ThreadRegistry.java",
                        "jbgui/agent/Premain.java", "jbgui/agent/JdkAccess.java")
JDK_INTERNAL_EXPORTS = ("java.base/jdk.internal.misc=ALL-UNNAMED", "java.base/jdk.internal.vm.annotation=ALL-UNNAMED",
                        "java.base/jdk.internal.access=ALL-UNNAMED")


class AgentBuildError(Exception):
    """The agent cannot be built; the message says what to install or fix."""


def find_java_home() -> Path:
    """The JDK used to build the agent: ``$JAVA_HOME``, else the one ``javac`` on PATH belongs to."""
    env = os.environ.get("JAVA_HOME")
    if env and (Path(env) / "bin" / "javac").exists():
        return Path(env)
    javac = shutil.which("javac")
    if javac:
        return Path(javac).resolve().parent.parent
    raise AgentBuildError(
        "no JDK found: install one with javac (on Debian: apt-get install openjdk-17-jdk-headless) "
        "or set JAVA_HOME"
    )


def find_asm_jars() -> list[Path]:
    """ASM's jars: ``$JBGUI_ASM_DIR`` or Debian's ``/usr/share/java`` (package libasm-java)."""
    asm_dir = Path(os.environ.get("JBGUI_ASM_DIR", DEFAULT_ASM_DIR))
    jars = [asm_dir / f"{name}.jar" for name in ASM_MODULES]
    missing = [str(j) for j in jars if not j.exists()]
    if missing:
        raise AgentBuildError(
            f"ASM not found ({', '.join(missing)} missing): install it with "
            "'apt-get install libasm-java', or point JBGUI_ASM_DIR at a folder holding "
            + ", ".join(f"{m}.jar" for m in ASM_MODULES)
        )
    return jars


def find_codec_jars() -> list[Path]:
    """zstd-jni's jar (Debian's libzstd-jni-java), bundled into the engine for the chunk codec.

    Its native library (Debian's libzstd-jni1) is looked for at run time; without it the agent
    writes zlib chunks."""
    jar = Path(os.environ.get("JBGUI_ASM_DIR", DEFAULT_ASM_DIR)) / "zstd-jni.jar"
    if not jar.exists():
        raise AgentBuildError(f"zstd-jni not found ({jar} missing): install it with "
                              "'apt-get install libzstd-jni-java libzstd-jni1'")
    return [jar]


def _library_jars() -> list[Path]:
    """Every jar the engine is compiled against and bundles: ASM, then the codec."""
    return find_asm_jars() + find_codec_jars()


def _source_files() -> list[Path]:
    files = sorted(JAVA_SOURCES.rglob("*.java"))
    if not files:
        raise AgentBuildError(f"the agent's Java sources are missing from {JAVA_SOURCES}")
    return files


def build_key(sources: list[Path], asm_jars: list[Path]) -> str:
    """A hash of everything the jars are made from."""
    digest = hashlib.sha256()
    for path in sources:
        digest.update(str(path.relative_to(JAVA_SOURCES)).encode())
        digest.update(path.read_bytes())
    for jar in asm_jars:
        digest.update(jar.name.encode())
        digest.update(jar.read_bytes())
    digest.update(JAVA_RELEASE.encode())
    digest.update(_manifest())
    digest.update(str(JAR_COMPRESSION).encode())
    digest.update(" ".join(NO_INVOKEDYNAMIC + JDK_INTERNAL_SOURCES + JDK_INTERNAL_EXPORTS).encode())
    return digest.hexdigest()[:16]


def cache_root() -> Path:
    """Where built agents go: ``$JBGUI_CACHE`` or ``~/.cache/jbgui``."""
    env = os.environ.get("JBGUI_CACHE")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "jbgui"


def agent_dir() -> Path:
    """The directory the current sources build into (it may not exist yet)."""
    return cache_root() / f"agent-{build_key(_source_files(), _library_jars())}"


def ensure_agent() -> Path:
    """Return the path of ``jbgui-agent.jar``, building the three jars first if needed."""
    target = agent_dir()
    if (target / AGENT_JAR).exists():
        return target / AGENT_JAR
    _build_into(target)
    return target / AGENT_JAR


def _manifest() -> bytes:
    # Can-Maintain-Original-Method-Order (read by the JDK's libinstrument, 17 through 25, though
    # not among the documented attributes): without it HotSpot orders the methods of a class it
    # loads from the runtime image by the addresses of their names, which differ from run to run,
    # and the class bytes the agent gets to retransform differ with them. Classes loaded before the
    # agent are cached by the CRC of those bytes (jbgui.instr.ClassCache): with -Xverify, 97 of
    # 1,179 missed the cache on each run, and instrumenting them again cost a second.
    # Can-Redefine-Classes: start-up redefines the classes loaded before the agent with the bytes
    # of the class cache's bundle rather than retransforming them (jbgui.agent.Engine), which spares
    # HotSpot rebuilding each class file from the loaded class only for the transformer to look it
    # up in the same bundle.
    return (
        "Manifest-Version: 1.0\r\n"
        "Premain-Class: jbgui.agent.Premain\r\n"
        "Can-Retransform-Classes: true\r\n"
        "Can-Redefine-Classes: true\r\n"
        "Can-Maintain-Original-Method-Order: true\r\n"
        "Created-By: jbgui\r\n\r\n"
    ).encode()


# String concatenation compiled to StringBuilder calls, not invokedynamic: the first indy call
# site bootstraps java.lang.invoke, whose classes the agent has just instrumented, on the traced
# program's main thread at start-up (perf: a tenth of a traced hello world's CPU). The agent's
# sources use no lambdas for the same reason; tests/agent/test_no_invokedynamic.py checks the jars.
NO_INVOKEDYNAMIC = ("-XDstringConcat=inline",)
# The runtime's and the engine's jars are stored, not deflated: every traced run's start-up reads
# a few hundred of their classes (ASM's among them), and inflating them cost about 25 ms of a
# traced hello world (alternating runs, 569 -> 542 ms median on a loaded 2-core machine).
JAR_COMPRESSION = zipfile.ZIP_STORED


def _build_into(target: Path) -> None:
    java_home = find_java_home()
    asm_jars = _library_jars()
    sources = _source_files()
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="agent-build-", dir=target.parent))
    try:
        classes = work / "classes"
        classes.mkdir()
        javac = str(java_home / "bin" / "javac")
        internal = [p for p in sources if p.relative_to(JAVA_SOURCES).as_posix() in JDK_INTERNAL_SOURCES]
        # javac refuses --add-exports of a system module with --release, so the few classes that
        # use JDK internals are compiled first with -source/-target (their API is the same on
        # every JDK the agent supports) and the rest against them with --release.
        _javac([javac, "-source", JAVA_RELEASE, "-target", JAVA_RELEASE, *NO_INVOKEDYNAMIC, "-nowarn", "-Xlint:none",
                "-encoding", "UTF-8", *(a for pkg in JDK_INTERNAL_EXPORTS for a in ("--add-exports", pkg)),
                # the other classes they use are read from their sources and compiled below
                "-sourcepath", str(JAVA_SOURCES), "-implicit:none",
                "-d", str(classes), *map(str, internal)])
        _javac([javac, "--release", JAVA_RELEASE, *NO_INVOKEDYNAMIC, "-nowarn", "-Xlint:none", "-encoding", "UTF-8",
                "-cp", os.pathsep.join(map(str, [classes, *asm_jars])), "-d", str(classes),
                *(str(p) for p in sources if p not in internal)])
        out = work / "jars"
        out.mkdir()
        with zipfile.ZipFile(out / AGENT_JAR, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", _manifest())
            _add_tree(jar, classes, ("jbgui/agent/Premain",))
        with zipfile.ZipFile(out / RUNTIME_JAR, "w", JAR_COMPRESSION) as jar:
            _add_tree(jar, classes, ("jbgui/runtime/", "jbgui/output/"))
        with zipfile.ZipFile(out / ENGINE_JAR, "w", JAR_COMPRESSION) as jar:
            _add_tree(jar, classes, ("jbgui/agent/", "jbgui/instr/", "jbgui/zstd/"), exclude=("jbgui/agent/Premain",))
            for asm in asm_jars:
                with zipfile.ZipFile(asm) as source:
                    for info in source.infolist():
                        if info.filename.endswith(".class") and "module-info" not in info.filename:
                            jar.writestr(info.filename, source.read(info))
        try:
            out.rename(target)
        except OSError:
            # Another process built the same key at the same time; theirs is as good as ours.
            if not (target / AGENT_JAR).exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _javac(cmd: list[str]) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise AgentBuildError("javac failed to compile the agent:\n" + result.stderr)


def _add_tree(jar: zipfile.ZipFile, root: Path, prefixes: tuple[str, ...], exclude: tuple[str, ...] = ()) -> None:
    for path in sorted(root.rglob("*.class")):
        name = path.relative_to(root).as_posix()
        if name.startswith(prefixes) and not name.startswith(exclude):
            jar.write(path, name)


def main() -> int:
    try:
        print(ensure_agent())
    except AgentBuildError as error:
        print(f"jbgui: cannot build the agent: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
