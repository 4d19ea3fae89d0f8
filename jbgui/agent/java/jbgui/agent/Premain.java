package jbgui.agent;

import java.io.File;
import java.lang.instrument.Instrumentation;
import java.util.jar.JarFile;

/**
 * The {@code -javaagent} entry point. It lives alone in jbgui-agent.jar on the system class path,
 * so it stays tiny: it puts jbgui-runtime.jar on the bootstrap class path (instrumented JDK
 * classes must reach the runtime), loads the engine and its ASM in an isolated class loader
 * whose parent is the bootstrap loader (a program's own ASM never meets ours), and hands over.
 * Every JDK class it and the engine load before the agent takes over is one more class that
 * start-up retransforms (about 0.35 ms each), so both avoid the JDK's heavier machinery.
 */
public final class Premain {
    private Premain() {}

    public static void premain(String args, Instrumentation inst) {
        try {
            File agentJar = new File(Premain.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            File dir = agentJar.getParentFile();
            File runtime = new File(dir, "jbgui-runtime.jar");
            File engine = new File(dir, "jbgui-engine.jar");
            if (!runtime.isFile() || !engine.isFile()) {
                fail("jbgui-runtime.jar and jbgui-engine.jar must lie beside " + agentJar
                        + " (rebuild with: python -m jbgui.agent.build)");
            }
            defineInBootLoader(inst, runtime);
            ClassLoader isolated = new EngineLoader(engine);
            Class<?> main = Class.forName("jbgui.agent.Engine", true, isolated);
            main.getMethod("start", String.class, Instrumentation.class).invoke(null, args, inst);
        } catch (java.lang.reflect.InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException && "jbgui.agent.AgentError".equals(cause.getClass().getName())) {
                fail(cause.getMessage());
            }
            cause.printStackTrace();
            fail("could not start: " + cause);
        } catch (Exception e) {
            e.printStackTrace();
            fail("could not start: " + e);
        }
    }

    /**
     * Defines the runtime's classes directly in the bootstrap loader. Appending the jar to the
     * boot class path would work too, but makes HotSpot print a CDS warning on the program's
     * stderr and turn class-data sharing off for the program's own classes.
     */
    private static void defineInBootLoader(Instrumentation inst, File runtime) throws Exception {
        java.util.Map<String, byte[]> pending = new java.util.LinkedHashMap<>();
        try (JarFile jar = new JarFile(runtime)) {
            java.util.Enumeration<java.util.jar.JarEntry> entries = jar.entries();
            while (entries.hasMoreElements()) {
                java.util.jar.JarEntry e = entries.nextElement();
                String name = e.getName();
                if (name.endsWith(".class")) {
                    try (java.io.InputStream in = jar.getInputStream(e)) {
                        pending.put(name.substring(0, name.length() - 6).replace('/', '.'), in.readAllBytes());
                    }
                }
            }
        }
        try {
            inst.redefineModule(Object.class.getModule(), java.util.Set.of(),
                    java.util.Map.of("jdk.internal.access", java.util.Set.of(Premain.class.getModule())),
                    java.util.Map.of(), java.util.Set.of(), java.util.Map.of());
            // A class is defined after its superclass and interfaces (TraceWriter's sink implements
            // the runtime's TraceSink): the boot loader cannot find one that is not defined yet, so
            // a class whose supertype is missing waits for the next round.
            while (!pending.isEmpty()) {
                int before = pending.size();
                NoClassDefFoundError last = null;
                for (java.util.Iterator<java.util.Map.Entry<String, byte[]>> it = pending.entrySet().iterator(); it.hasNext(); ) {
                    java.util.Map.Entry<String, byte[]> entry = it.next();
                    try {
                        Internal.define(entry.getKey(), entry.getValue());
                        it.remove();
                    } catch (NoClassDefFoundError e) {
                        last = e;
                    }
                }
                if (pending.size() == before) {
                    throw last;
                }
            }
        } catch (LinkageError | RuntimeException e) {
            // A JDK without that internal entry point: the documented way, with its CDS warning.
            inst.appendToBootstrapClassLoaderSearch(new JarFile(runtime));
        }
    }

    /**
     * The JDK-internal call, compiled against jdk.internal.access (build.py), and called directly:
     * reflection would load the types of every method of SharedSecrets and JavaLangAccess (some
     * 40 classes), and after 15 calls generate an accessor class, all of which start-up would then
     * retransform. A JDK without it fails the call with a LinkageError, caught above.
     */
    private static final class Internal {
        static void define(String name, byte[] bytes) {
            jdk.internal.access.SharedSecrets.getJavaLangAccess().defineClass(null, name, bytes, null, "jbgui-runtime");
        }
    }

    /**
     * The engine's isolated class loader: its classes straight from the jar, its parent the
     * bootstrap loader. Not a URLClassLoader: that one reaches for URL connections, file
     * permissions and the security properties file (some 25 classes, each of which start-up would
     * then retransform). Resources are not served: the engine reads none.
     */
    private static final class EngineLoader extends ClassLoader {
        static {
            // Locks per class name, as URLClassLoader does, not the whole loader: the engine's
            // classes are loaded by several threads at once (retransformation, writer), each of
            // which may meanwhile transform a JDK class and wait for the writer's queue.
            registerAsParallelCapable();
        }

        private final JarFile jar;
        private final java.security.ProtectionDomain domain;

        EngineLoader(File engine) throws java.io.IOException {
            super("jbgui-engine", null);
            jar = new JarFile(engine, false);
            domain = new java.security.ProtectionDomain(new java.security.CodeSource(engine.toURI().toURL(),
                    (java.security.CodeSigner[]) null), null);
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            java.util.jar.JarEntry entry = jar.getJarEntry(name.replace('.', '/') + ".class");
            if (entry == null) {
                throw new ClassNotFoundException(name);
            }
            byte[] bytes;
            try (java.io.InputStream in = jar.getInputStream(entry)) {
                bytes = in.readAllBytes();
            } catch (java.io.IOException e) {
                throw new ClassNotFoundException(name, e);
            }
            return defineClass(name, bytes, 0, bytes.length, domain);
        }
    }

    /** Stops the JVM before main: a traced run that silently ran untraced would mislead the user. */
    private static void fail(String message) {
        System.err.println("jbgui agent: error: " + message);
        System.err.flush();
        Runtime.getRuntime().halt(2);
    }
}
