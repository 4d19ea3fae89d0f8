package jbgui.agent;

import java.io.File;
import java.io.IOException;
import java.lang.instrument.ClassDefinition;
import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jbgui.output.Json;
import jbgui.output.TraceWriter;
import jbgui.runtime.ClassRegistry;
import jbgui.runtime.Config;
import jbgui.runtime.Tracer;

/**
 * Start-up of the recorder, in the isolated engine class loader: check the options and the
 * output directory, let every named module read the runtime, start the writer, register the
 * transformer, retransform the classes loaded before the agent, hook the JVM's shutdown, and
 * only then turn recording on.
 */
public final class Engine {
    private Engine() {}

    public static final String VERSION = "0.1.0";
    /** Shutdown hook slot in the JVM's own table: after the program's shutdown hooks (slot 1). */
    private static final int SHUTDOWN_SLOT = 7;

    /** Whether the JDK has virtual threads' continuations (JDK 21+; in JDK 19 and 20 a preview). */
    private static boolean hasContinuations() {
        try {
            Class.forName("jdk.internal.vm.Continuation", false, null);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    public static void start(String args, Instrumentation inst) throws Exception {
        long startNanos = System.nanoTime();
        Phases phases = new Phases(startNanos);
        Options options = Options.parse(args);
        prepareDirectory(options.out);

        Config.mode = options.mode;
        Config.recordClassLoad = options.selected("class_load");
        Config.recordMethodStart = options.selected("method_start");
        Config.recordMethodEnd = options.selected("method_end");
        Config.recordBlocks = options.blockLevel && options.selected("basic_block");
        Config.recordReceiver = options.selected("receiver_type");
        Config.recordExceptionExit = options.selected("exception_exit");
        Config.clockPeriodMicros = options.clockMicros;
        Config.virtualThreadsMax = options.virtualThreads;
        Config.blockingStamps = options.blocking;
        Config.entryMarks = options.entryElision();
        Config.loopRecords = options.loopRecords();

        Module runtime = Tracer.class.getModule();
        for (Module m : ModuleLayer.boot().modules()) {
            readRuntime(inst, m, runtime);
        }
        // The shutdown hook runs in the JVM's own table of system hooks (jdk.internal.access).
        Module base = Object.class.getModule();
        Map<String, Set<Module>> exports = new java.util.HashMap<>();
        exports.put("jdk.internal.access", Set.of(Engine.class.getModule(), runtime));
        // jdk.internal.misc: the runtime reads Thread.holder without running traced code (ThreadObjects).
        exports.put("jdk.internal.misc", Set.of(runtime));
        boolean continuations = hasContinuations();
        if (continuations) {
            // jdk.internal.vm: virtual threads pin themselves to their carrier in the hand-off (CarrierPin).
            exports.put("jdk.internal.vm", Set.of(runtime));
        }
        inst.redefineModule(base, Set.of(), exports, Map.of(), Set.of(), Map.of());
        jbgui.runtime.ThreadObjects.init();

        TraceWriter.useCodec(CodecModule.load(inst));
        TraceWriter.start(options.out, options.toJson(), jvmJson(), options.mode == 1, Config.maxBufferedBytes,
                options.clockMicros);
        phases.mark("options, modules and writer");

        // The boot layer's configuration is already built; ModuleFinder.ofSystem() would read the
        // runtime image again (and load many classes the agent would have to retransform).
        Set<String> systemModules = new HashSet<>();
        for (java.lang.module.ResolvedModule m : ModuleLayer.boot().configuration().modules()) {
            java.util.Optional<java.net.URI> where = m.reference().location();
            if (where.isPresent() && "jrt".equals(where.get().getScheme())) {
                systemModules.add(m.name());
            }
        }
        Transformer transformer = new Transformer(inst, options, runtime, Engine.class.getClassLoader(),
                Collections.unmodifiableSet(systemModules));
        phases.mark("transformer");
        transformer.warmUp();
        phases.mark("warm-up");
        inst.addTransformer(transformer, true);
        long began = System.nanoTime();
        transformer.openCacheBundle();
        phases.mark("bundle");
        retransformLoaded(inst, transformer, phases);
        transformer.layoutDone();
        String bundle = transformer.preloadedDone();
        phases.mark("layout's end");
        if (continuations) {
            // After the classes loaded before the agent were instrumented: the lookup loads
            // java.lang.invoke classes, which would otherwise be more to redefine at start-up.
            try {
                jbgui.runtime.CarrierPin.init();
            } catch (ReflectiveOperationException | RuntimeException e) {
                TraceWriter.log("warning: virtual threads cannot be pinned to their carriers (" + e + "): one that"
                        + " hands its events to the writer while every carrier is busy may not run again");
            }
            phases.mark("carrier pin");
        }
        TraceWriter.log("info: instrumented " + transformer.preloadedCount + " classes loaded before the agent ("
                + transformer.redefinedCount.get() + " redefined from the class cache, the others retransformed) in "
                + (System.nanoTime() - began) / 1_000_000 + " ms (transformer " + transformer.transformNanos.get() / 1_000_000
                + " ms: " + jbgui.instr.ClassInstrumenter.phaseSummary() + "; " + bundle + "); agent start-up "
                + (System.nanoTime() - startNanos) / 1_000_000 + " ms (" + phases + ")");
        transformer.startupTransformNanos = transformer.transformNanos.get();
        transformer.startupTransformed = transformer.transformed.get();
        cacheSummary = transformer;
        registerShutdownHook();
        Tracer.setActive(options.record);
    }

    private static void prepareDirectory(File out) {
        if (out.exists() && !out.isDirectory()) {
            throw new AgentError("output directory " + out + " exists and is not a directory");
        }
        if (!out.exists() && !out.mkdirs()) {
            throw new AgentError("cannot create output directory " + out + " (check the path and its permissions)");
        }
        if (new File(out, "trace.json").exists()) {
            throw new AgentError("output directory " + out + " already holds a trace; choose another one");
        }
        File probe = new File(out, ".jbgui-write-test");
        try {
            if (!probe.createNewFile() && !probe.exists()) {
                throw new IOException("createNewFile failed");
            }
            probe.delete();
        } catch (IOException | SecurityException e) {
            throw new AgentError("output directory " + out + " is not writable: " + e.getMessage());
        }
    }

    static void readRuntime(Instrumentation inst, Module m, Module runtime) {
        if (m.isNamed() && !m.canRead(runtime) && inst.isModifiableModule(m)) {
            inst.redefineModule(m, Set.of(runtime), Map.of(), Map.of(), Set.of(), Map.of());
        }
    }

    /** Instruments the classes the JVM loaded before the agent ran (the seed's "core JRE classes"). */
    private static void retransformLoaded(Instrumentation inst, Transformer transformer, Phases phases) {
        Class<?>[] loaded = inst.getAllLoadedClasses();
        List<Class<?>> todo = new ArrayList<>();
        for (Class<?> c : loaded) {
            if (transformer.wantsRetransform(c)) {
                todo.add(c);
            }
        }
        transformer.preloadedCount = todo.size();
        transformer.reserveLayout(todo);
        phases.mark("layout");
        // Classes the cache's bundle holds are redefined with its bytes: retransforming them would
        // have HotSpot rebuild each class file from the loaded class and call the transformer with
        // it, only for the transformer to look the class up in the same bundle.
        List<ClassDefinition> defs = redefinable(inst) ? transformer.definitions(todo) : new ArrayList<ClassDefinition>();
        // Loaded in every run, redefining or not, so that the JDK classes the agent loads (and
        // the program then does not) are the same whatever the cache held (trace neutrality).
        PRELOADED_FOR_NEUTRALITY[0] = ClassDefinition.class;
        phases.mark("relocation and copy check");
        final List<ClassDefinition> defs2 = new ArrayList<>(defs.subList(defs.size() / 2, defs.size()));
        List<ClassDefinition> defs1 = new ArrayList<>(defs.subList(0, defs.size() / 2));
        // Two threads: the transformer's work (parsing, probing, writing class files) runs in the
        // thread that asks for the retransformation, so the second core shortens start-up.
        final List<Class<?>> second = new ArrayList<>();
        List<Class<?>> first = new ArrayList<>();
        for (int i = 0; i < todo.size(); i++) {
            (i % 2 == 0 ? first : second).add(todo.get(i));
        }
        Thread helper = new Thread(new Runnable() {
            @Override
            public void run() {
                try {
                    second.addAll(redefineBatches(inst, transformer, defs2));
                    retransformBatches(inst, transformer, second);
                } finally {
                    jbgui.runtime.ThreadRegistry.leaveFast(Thread.currentThread());
                }
            }
        }, "jbgui-retransform");
        helper.setDaemon(true);
        jbgui.runtime.ThreadRegistry.ignore(helper);
        helper.start();
        first.addAll(redefineBatches(inst, transformer, defs1));
        retransformBatches(inst, transformer, first);
        try {
            helper.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        phases.mark("redefinition and retransformation");
    }

    /**
     * How long each step of start-up took, for agent.log: the premain is most of a short run's
     * time, and its steps are what a change to start-up moves (docs/recorder-cost.md).
     */
    private static final class Phases {
        private final StringBuilder text = new StringBuilder();
        private long last;

        Phases(long start) {
            last = start;
        }

        void mark(String step) {
            long now = System.nanoTime();
            text.append(text.length() == 0 ? "" : ", ").append(step).append(' ').append((now - last) / 1_000_000).append(" ms");
            last = now;
        }

        @Override
        public String toString() {
            return text.toString();
        }
    }

    /**
     * Retransforms the classes in one call (each call is a VM operation: a safepoint and a pass
     * over compiled code), halving the list when a call fails to find the class that fails.
     */
    private static void retransformBatches(Instrumentation inst, Transformer transformer, List<Class<?>> todo) {
        if (todo.isEmpty()) {
            return;
        }
        try {
            inst.retransformClasses(todo.toArray(new Class<?>[0]));
        } catch (Throwable e) {
            if (todo.size() == 1) {
                transformer.retransformFailed(todo.get(0), e);
                return;
            }
            int half = todo.size() / 2;
            retransformBatches(inst, transformer, new ArrayList<>(todo.subList(0, half)));
            retransformBatches(inst, transformer, new ArrayList<>(todo.subList(half, todo.size())));
        }
    }

    private static final Class<?>[] PRELOADED_FOR_NEUTRALITY = new Class<?>[1];

    /**
     * Whether classes may be redefined from the cache's bundle rather than retransformed: not when
     * the boot layer's classes may not be the runtime image's (--patch-module,
     * --upgrade-module-path: the bundle is made from the image's classes), and not when
     * -Djbgui.redefine=false asks for the retransformation of every class.
     */
    private static boolean redefinable(Instrumentation inst) {
        return inst.isRedefineClassesSupported() && !"false".equals(System.getProperty("jbgui.redefine"))
                && System.getProperty("jdk.module.patch.0") == null && System.getProperty("jdk.module.upgrade.path") == null;
    }

    /**
     * Redefines the classes in one call, halving the list when a call fails to find the class
     * that fails; returns the classes that could not be redefined, to be retransformed instead.
     */
    private static List<Class<?>> redefineBatches(Instrumentation inst, Transformer transformer, List<ClassDefinition> defs) {
        List<Class<?>> failed = new ArrayList<>();
        if (defs.isEmpty()) {
            return failed;
        }
        try {
            inst.redefineClasses(defs.toArray(new ClassDefinition[0]));
            transformer.redefined(defs);
        } catch (Throwable e) {
            if (defs.size() == 1) {
                transformer.redefineFailed(defs.get(0).getDefinitionClass(), e);
                failed.add(defs.get(0).getDefinitionClass());
                return failed;
            }
            int half = defs.size() / 2;
            failed.addAll(redefineBatches(inst, transformer, new ArrayList<>(defs.subList(0, half))));
            failed.addAll(redefineBatches(inst, transformer, new ArrayList<>(defs.subList(half, defs.size()))));
        }
        return failed;
    }

    /** Says in agent.log, at the end, what the class cache served (null: no transformer yet). */
    private static volatile Transformer cacheSummary;

    private static void registerShutdownHook() {
        // Anonymous classes, not lambdas: a lambda's first call bootstraps java.lang.invoke
        // (instrumented, at start-up), which cost tens of milliseconds of every traced run.
        final Runnable hook = new Runnable() {
            @Override
            public void run() {
                Transformer t = cacheSummary;
                String summary = t == null ? null : t.cacheSummary();
                if (summary != null) {
                    TraceWriter.log("info: " + summary);
                }
                if (t != null) {
                    int classes = t.transformed.get() - t.startupTransformed;
                    TraceWriter.log("info: the transformer took " + (t.transformNanos.get() - t.startupTransformNanos) / 1_000_000
                            + " ms for the " + classes + " classes handed to it after start-up (in all: "
                            + jbgui.instr.ClassInstrumenter.phaseSummary() + ")");
                }
                TraceWriter.shutdown("shutdown");
            }
        };
        try {
            JdkAccess.registerShutdownHook(SHUTDOWN_SLOT, new Runnable() {
                @Override
                public void run() {
                    jbgui.runtime.ThreadTrace guard = Tracer.guardCurrentThread();
                    try {
                        hook.run();
                    } finally {
                        Tracer.unguard(guard);
                    }
                }
            });
        } catch (LinkageError | RuntimeException e) {
            // An ordinary hook then: it may run beside the program's own hooks.
            TraceWriter.log("warning: JVM system shutdown hook unavailable (" + e + "); using Runtime.addShutdownHook");
            Thread t = new Thread(hook, "jbgui-shutdown");
            jbgui.runtime.ThreadRegistry.ignore(t);
            Runtime.getRuntime().addShutdownHook(t);
        }
    }

    private static String jvmJson() {
        String command = System.getProperty("sun.java.command", "");
        return "{\"java_version\": " + Json.quote(System.getProperty("java.version")) + ", \"vm_name\": "
                + Json.quote(System.getProperty("java.vm.name")) + ", \"java_home\": "
                + Json.quote(System.getProperty("java.home")) + ", \"pid\": " + Config.pid()
                + ", \"command\": " + Json.quote(command) + ", \"cwd\": " + Json.quote(System.getProperty("user.dir"))
                + ", \"class_path\": " + Json.quote(System.getProperty("java.class.path", "")) + "}";
    }

    static int classCount() {
        return ClassRegistry.classCount();
    }
}
