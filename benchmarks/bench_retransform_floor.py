"""Hello world's floor under any agent that instruments the JDK by retransformation.

Issue 14 asks for a traced hello world in 0.5 s. An agent that instruments the classes loaded
before it must retransform them (~700 on JDK 17), and the JVM's part of that (reconstituting each
class file, calling the transformers) is paid even when the transformer changes nothing. This
script times, alternating, hello world untraced, under a do-nothing agent that retransforms the
same classes with a transformer returning null (nothing is redefined), and traced by jbgui's
agent, and prints medians::

    python benchmarks/bench_retransform_floor.py [--runs 7]

The do-nothing agent also prints how long ``retransformClasses`` took. A second one, the
"identity agent", redefines the same classes with the runtime image's own bytes, unchanged: on
JDK 25 HotSpot verifies every redefined class, the JDK's included (JDK 17 skips the boot loader's),
and that verification loads the classes it checks assignments against, so its time is the floor
of any agent that redefines or retransforms the JDK's classes there::

    python benchmarks/bench_retransform_floor.py --java-home /usr/lib/jvm/temurin-25-jdk-amd64
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from jbgui.agent.build import ensure_agent, find_java_home  # noqa: E402

HELLO = 'public class Hello { public static void main(String[] a) { System.out.println("Hello, world!"); } }\n'
NULL_AGENT = r"""
import java.lang.instrument.*;
import java.security.ProtectionDomain;
import java.util.*;
public class NullAgent {
    public static void premain(String args, Instrumentation inst) throws Exception {
        inst.addTransformer(new ClassFileTransformer() {
            public byte[] transform(Module m, ClassLoader l, String n, Class<?> c, ProtectionDomain d, byte[] b) {
                return null;
            }
        }, true);
        List<Class<?>> todo = new ArrayList<>();
        for (Class<?> c : inst.getAllLoadedClasses()) {
            if (inst.isModifiableClass(c) && !c.isArray() && !c.isHidden()) todo.add(c);
        }
        long t0 = System.nanoTime();
        inst.retransformClasses(todo.toArray(new Class<?>[0]));
        System.err.println("retransformed " + todo.size() + " classes in " + (System.nanoTime() - t0) / 1000000 + " ms");
    }
}
"""
# Redefines the JDK's classes loaded before it with their own bytes from the runtime image (the
# program's class path holds none yet): what the JVM spends on redefinition with nothing changed.
IDENTITY_AGENT = r"""
import java.io.InputStream;
import java.lang.instrument.*;
import java.util.*;
public class IdentityAgent {
    public static void premain(String args, Instrumentation inst) throws Exception {
        List<ClassDefinition> defs = new ArrayList<>();
        for (Class<?> c : inst.getAllLoadedClasses()) {
            if (!inst.isModifiableClass(c) || c.isArray() || c.isHidden() || c.getClassLoader() != null) continue;
            String name = c.getName();
            try (InputStream in = c.getModule().getResourceAsStream(name.replace('.', '/') + ".class")) {
                if (in != null) defs.add(new ClassDefinition(c, in.readAllBytes()));
            }
        }
        long t0 = System.nanoTime();
        inst.redefineClasses(defs.toArray(new ClassDefinition[0]));
        System.err.println("redefined " + defs.size() + " classes in " + (System.nanoTime() - t0) / 1000000 + " ms");
    }
}
"""


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--java-home", type=Path, help="the JDK to run (default: the one jbgui finds)")
    args = ap.parse_args(argv)
    java_home = args.java_home or find_java_home()
    java, javac, jar = (str(java_home / "bin" / t) for t in ("java", "javac", "jar"))
    agent = ensure_agent()
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        work = Path(tmp)
        (work / "Hello.java").write_text(HELLO)
        (work / "NullAgent.java").write_text(NULL_AGENT)
        (work / "IdentityAgent.java").write_text(IDENTITY_AGENT)
        (work / "manifest.txt").write_text("Premain-Class: NullAgent\nCan-Retransform-Classes: true\n")
        (work / "identity.txt").write_text("Premain-Class: IdentityAgent\nCan-Redefine-Classes: true\n")
        subprocess.run([javac, "-d", str(work / "classes"), str(work / "Hello.java"), str(work / "NullAgent.java"),
                        str(work / "IdentityAgent.java")], check=True)
        for jar_name, manifest in (("null-agent.jar", "manifest.txt"), ("identity-agent.jar", "identity.txt")):
            subprocess.run([jar, "cfm", str(work / jar_name), str(work / manifest), "-C", str(work / "classes"), "."],
                           check=True, capture_output=True)
        variants = {
            "untraced": [],
            "null agent": [f"-javaagent:{work / 'null-agent.jar'}"],
            "identity agent": [f"-javaagent:{work / 'identity-agent.jar'}"],
            "jbgui agent": None,  # a fresh trace directory each run
        }
        times: dict[str, list[float]] = {v: [] for v in variants}
        retransform_ms: list[int] = []
        redefine_ms: list[int] = []
        counts: dict[str, str] = {}
        for run in range(args.runs + 1):  # the first round warms the caches and is not counted
            for name, extra in variants.items():
                if extra is None:
                    extra = [f"-javaagent:{agent}=out={work / f'trace{run}'}"]
                began = time.monotonic()
                done = subprocess.run([java, *extra, "-cp", str(work / "classes"), "Hello"], capture_output=True, text=True)
                took = time.monotonic() - began
                if done.returncode != 0 or "Hello, world!" not in done.stdout:
                    print(f"{name}: exit {done.returncode}: {done.stderr[-500:]}", file=sys.stderr)
                    return 1
                if run == 0:
                    continue
                times[name].append(took)
                m = re.search(r"retransformed \d+ classes in (\d+) ms", done.stderr)
                if m:
                    retransform_ms.append(int(m.group(1)))
                m = re.search(r"redefined (\d+) classes in (\d+) ms", done.stderr)
                if m:
                    counts["identity"] = m.group(1)
                    redefine_ms.append(int(m.group(2)))
        print(f"hello world, medians of {args.runs} alternating runs ({java_home.name}):")
        for name, ts in times.items():
            print(f"  {name:12s} {statistics.median(ts):.3f} s  (min {min(ts):.3f}, max {max(ts):.3f})")
        print(f"  the null agent's retransformClasses: median {statistics.median(retransform_ms)} ms")
        print(f"  the identity agent's redefineClasses of {counts.get('identity')} classes: median {statistics.median(redefine_ms)} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
