package jbgui.agent;

import java.io.File;
import java.lang.instrument.Instrumentation;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.jar.JarFile;

/**
 * The {@code -javaagent} entry point. It lives alone in jbgui-agent.jar on the system class path,
 * so it stays tiny: it puts jbgui-runtime.jar on the bootstrap class path (instrumented JDK
 * classes must reach the runtime), loads the engine and its ASM in an isolated class loader
 * whose parent is the bootstrap loader (a program's own ASM never meets ours), and hands over.
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
            ClassLoader isolated = new URLClassLoader("jbgui-engine", new URL[] {engine.toURI().toURL()}, null);
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
        try {
            inst.redefineModule(Object.class.getModule(), java.util.Set.of(),
                    java.util.Map.of("jdk.internal.access", java.util.Set.of(Premain.class.getModule())),
                    java.util.Map.of(), java.util.Set.of(), java.util.Map.of());
            Object access = Class.forName("jdk.internal.access.SharedSecrets").getMethod("getJavaLangAccess").invoke(null);
            java.lang.reflect.Method define = Class.forName("jdk.internal.access.JavaLangAccess").getMethod("defineClass",
                    ClassLoader.class, String.class, byte[].class, java.security.ProtectionDomain.class, String.class);
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
            // A class is defined after its superclass and interfaces (TraceWriter's sink implements
            // the runtime's TraceSink): the boot loader cannot find one that is not defined yet, so
            // a class whose supertype is missing waits for the next round.
            while (!pending.isEmpty()) {
                int before = pending.size();
                java.lang.reflect.InvocationTargetException last = null;
                for (java.util.Iterator<java.util.Map.Entry<String, byte[]>> it = pending.entrySet().iterator(); it.hasNext(); ) {
                    java.util.Map.Entry<String, byte[]> entry = it.next();
                    try {
                        define.invoke(access, null, entry.getKey(), entry.getValue(), null, "jbgui-runtime");
                        it.remove();
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        if (!(e.getCause() instanceof NoClassDefFoundError)) {
                            throw e;
                        }
                        last = e;
                    }
                }
                if (pending.size() == before) {
                    throw last;
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            // A JDK without that internal entry point: the documented way, with its CDS warning.
            inst.appendToBootstrapClassLoaderSearch(new JarFile(runtime));
        }
    }

    /** Stops the JVM before main: a traced run that silently ran untraced would mislead the user. */
    private static void fail(String message) {
        System.err.println("jbgui agent: error: " + message);
        System.err.flush();
        Runtime.getRuntime().halt(2);
    }
}
