package jbgui.agent;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import jbgui.instr.ClassInstrumenter;
import jbgui.instr.InstrumentOptions;
import jbgui.instr.ClassPlan;
import jbgui.instr.InstrumentResult;
import jbgui.output.TraceWriter;
import jbgui.runtime.ClassRegistry;
import jbgui.runtime.ThreadTrace;
import jbgui.runtime.Tracer;

/**
 * The class-file transformer: thin on purpose. It decides what happens to a class (instrument,
 * describe only, or leave alone), delegates the work to {@link ClassInstrumenter}, sends the
 * static information to the writer and logs every failure instead of letting the JVM swallow
 * it. The program never fails because of a class the agent could not instrument.
 */
final class Transformer implements ClassFileTransformer {
    /** The JDK method whose calls reach this transformer: hooked so its own work is not traced. */
    static final String HOOK_CLASS = "sun/instrument/InstrumentationImpl";

    private final Instrumentation inst;
    private final Options options;
    private final Module runtime;
    private final ClassLoader engineLoader;
    private final Set<String> systemModules;
    private final ClassInstrumenter instrumenter;
    /** Class id → first method id, so that a class retransformed again keeps its ids. */
    private final Map<Integer, Integer> described = new ConcurrentHashMap<>();
    int preloadedCount;
    /** Of those, how many were redefined with the bundle's bytes rather than retransformed. */
    final java.util.concurrent.atomic.AtomicInteger redefinedCount = new java.util.concurrent.atomic.AtomicInteger();

    Transformer(Instrumentation inst, Options options, Module runtime, ClassLoader engineLoader, Set<String> systemModules) {
        this.inst = inst;
        this.options = options;
        this.runtime = runtime;
        this.engineLoader = engineLoader;
        this.systemModules = systemModules;
        this.instrumenter = new ClassInstrumenter(InstrumentOptions.builder()
                .blockLevel(options.blockLevel).precise(options.precise).instructions(options.instructions)
                .blockEvents(options.selected("basic_block")).receiverEvents(options.selected("receiver_type"))
                .exceptionExitEvents(options.selected("exception_exit"))
                .blockingStamps(options.blocking && options.mode != 1).entryElision(options.entryElision())
                .loopRecords(options.loopRecords()).build());
        if (options.cacheDir != null) {
            cache = new jbgui.instr.ClassCache(new java.io.File(options.cacheDir, cacheKey(options)));
            instrumenter.setCache(cache);
            loadFileReaders();
        } else {
            cache = null;
        }
    }

    /**
     * The cache reads files on the threads that load classes, the program's among them, and the
     * bundle's reader closes its file on the writer thread. Closing a FileInputStream or a
     * RandomAccessFile loads a class the first time (FileInputStream$1, RandomAccessFile$2 on JDK
     * 17): loaded here, in every run, so that a run served by the cache loads the same classes on
     * the program's threads as a run that fills it (the first FileInputStream$1 is otherwise the
     * launcher's, after the agent, only in a run without cache hits). Adler32 likewise: the first
     * of the program's classes would load it. And a LinkedHashSet's iterator: describing a class
     * afresh iterates one (MethodElements), on the writer thread, only in a run the cache does not
     * serve entirely.
     */
    private static void loadFileReaders() {
        new java.util.zip.Adler32().update(0); // names the program's class entries (ClassCache.Key)
        new java.util.LinkedHashSet<Integer>().iterator();
        java.io.File jar = engineJar();
        if (jar == null) {
            return;
        }
        try (java.io.FileInputStream in = new java.io.FileInputStream(jar);
             java.io.RandomAccessFile raf = new java.io.RandomAccessFile(jar, "r")) {
            in.read();
            raf.read();
        } catch (java.io.IOException e) {
            // Only the class loads above were wanted.
        }
    }

    private final jbgui.instr.ClassCache cache;

    /** Before the classes loaded before the agent are retransformed: the cache's bundle of them. */
    void openCacheBundle() {
        if (cache != null) {
            cache.openBundle();
        }
    }

    /**
     * After that retransformation: has the writer write the bundle anew if it did not serve every
     * class, and returns a line for agent.log.
     */
    String preloadedDone() {
        if (cache == null) {
            return "no class cache";
        }
        Object write = cache.preloadedDone();
        if (write != null) {
            TraceWriter.staticInfo(write);
        }
        return cache.bundlesSummary();
    }

    /** What the class cache served after start-up, for agent.log; null without a cache. */
    String cacheSummary() {
        return cache == null ? null : cache.summary();
    }

    /**
     * The cache directory for this agent build, this JDK and the options that shape the
     * instrumented code: a change to any of them must never reuse an entry.
     */
    private static String cacheKey(Options o) {
        StringBuilder k = new StringBuilder();
        java.io.File engine = engineJar();
        if (engine != null) {
            k.append(engine.getAbsolutePath()).append('|').append(engine.length()).append('|').append(engine.lastModified());
        } else {
            k.append(Engine.VERSION);
        }
        k.append('|').append(System.getProperty("java.home")).append('|').append(System.getProperty("java.runtime.version"));
        k.append('|').append(o.blockLevel).append(o.precise).append(o.instructions).append(o.selected("basic_block"))
                .append(o.selected("receiver_type")).append(o.selected("exception_exit"))
                .append(o.blocking && o.mode != 1).append(o.entryElision()).append(o.loopRecords());
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        byte[] b = k.toString().getBytes(jbgui.output.Utf8.CHARSET);
        crc.update(b, 0, b.length);
        String feature = System.getProperty("java.specification.version");
        return "jdk" + feature + "-" + Long.toHexString(crc.getValue()) + "-" + Integer.toHexString(k.toString().hashCode());
    }

    /** jbgui-engine.jar, or null if it cannot be told. */
    private static java.io.File engineJar() {
        try {
            return new java.io.File(Transformer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (Exception e) {
            return null;
        }
    }

    /** Instruments one small class so the engine's classes are loaded before the program runs. */
    void warmUp() {
        try {
            // From the jar with JarFile (loaded already), not getResourceAsStream: the engine's
            // loader would ask the boot loader first, which opens the runtime image with some 35
            // classes that start-up would then retransform.
            byte[] bytes;
            try (java.util.jar.JarFile jar = new java.util.jar.JarFile(engineJar(), false);
                 java.io.InputStream in = jar.getInputStream(jar.getEntry("jbgui/agent/WarmUpTarget.class"))) {
                bytes = in.readAllBytes();
            }
            ClassPlan plan = new ClassPlan(-1, "jbgui/agent/WarmUpTarget", 0, "warm-up", null, false, false, false,
                    ClassPlan.Mode.TRACE, null);
            instrumenter.instrument(bytes, plan, new jbgui.instr.MethodIds(true));
        } catch (Throwable e) {
            TraceWriter.log("warning: warm-up failed: " + e);
        }
    }

    boolean wantsRetransform(Class<?> c) {
        if (c.isArray() || c.isPrimitive() || c.isHidden()) {
            return false;
        }
        ClassLoader loader = c.getClassLoader();
        String name = c.getName().replace('.', '/');
        if (isAgentLoader(loader) || isAgentClass(name, loader)) {
            return false;
        }
        if (!inst.isModifiableClass(c)) {
            listPreloaded(name, loader, "not-modifiable");
            return false;
        }
        if (loader == null && AGENT.equals(describeOnly(name, true))) {
            // The JVM's agent plumbing, never traced and called by the agent alone: listed without
            // its methods rather than retransformed to be described, which cost a start-up thread
            // 10-40 ms of parsing and describing in the interpreter for three classes.
            described.put(listPreloaded(name, null, AGENT), LEFT_ALONE);
            return false;
        }
        return true;
    }

    /** Lists a class loaded before the agent as not instrumented, without methods; returns its class id. */
    private static int listPreloaded(String name, ClassLoader loader, String reason) {
        int id = ClassRegistry.register(loader, name);
        TraceWriter.staticInfo(jbgui.output.ClassElement.uninstrumented(id, name, ClassRegistry.loaderId(loader),
                ClassRegistry.describe(loader), reason, true, false, false, false));
        return id;
    }

    /** Classes redefined with the bundle's bytes: already instrumented, whatever asks again. */
    private final Set<Integer> replaced = ConcurrentHashMap.newKeySet();

    /**
     * The classes of the layout that the bundle holds, as definitions to redefine them with,
     * each described in its slot; they leave {@code todo}.
     */
    java.util.List<java.lang.instrument.ClassDefinition> definitions(java.util.List<Class<?>> todo) {
        java.util.List<java.lang.instrument.ClassDefinition> out = new java.util.ArrayList<>();
        jbgui.instr.PreloadedLayout l = layout;
        if (l == null) {
            return out;
        }
        java.util.Iterator<Class<?>> it = todo.iterator();
        while (it.hasNext()) {
            Class<?> c = it.next();
            if (c.getClassLoader() != null) {
                continue;
            }
            String name = c.getName().replace('.', '/');
            int classId = ClassRegistry.lookup(null, name);
            jbgui.instr.PreloadedLayout.Slot slot = classId > 0 ? l.slot(classId) : null;
            if (slot == null || slot.filled()) {
                continue;
            }
            Module module = c.getModule();
            Engine.readRuntime(inst, module, runtime);
            ClassPlan plan = new ClassPlan(classId, name, 0, ClassRegistry.describe(null), module.getName(),
                    true, true, false, ClassPlan.Mode.TRACE, null);
            InstrumentResult result = instrumenter.fromBundle(plan, slot.firstId);
            if (result == null) {
                continue;
            }
            // Marked before the redefinition: the JVM hands these bytes to this transformer too.
            replaced.add(classId);
            ClassRegistry.methods(classId, slot.firstId, slot.idCount);
            described.put(classId, slot.firstId);
            l.fill(slot, result.xml, result.originalCrc);
            for (String warning : result.warnings) {
                TraceWriter.log("warning: " + name + ": " + warning);
            }
            out.add(new java.lang.instrument.ClassDefinition(c, result.bytes));
            it.remove();
        }
        if (!out.isEmpty() && !l.copyReady() && !cache.templatesSound()) {
            // Their descriptions would need the bundle's templates, which are damaged, and
            // without the original bytes nothing could describe them afresh: retransformed instead.
            for (java.lang.instrument.ClassDefinition d : out) {
                Class<?> c = d.getDefinitionClass();
                int classId = ClassRegistry.lookup(null, c.getName().replace('.', '/'));
                described.remove(classId);
                replaced.remove(classId);
                l.unfill(l.slot(classId));
                todo.add(c);
            }
            out.clear();
        }
        return out;
    }

    /** Classes of {@link #definitions} were redefined: counted as described, and as served by the bundle. */
    void redefined(java.util.List<java.lang.instrument.ClassDefinition> defs) {
        redefinedCount.addAndGet(defs.size());
        for (java.lang.instrument.ClassDefinition d : defs) {
            instrumenter.redefinedFromBundle(d.getDefinitionClass().getName().replace('.', '/'));
            TraceWriter.classDescribed(ClassRegistry.classCount(), MethodSpace.INSTANCE.used(), true, false);
        }
    }

    /**
     * A class of {@link #definitions} that the JVM would not redefine with the bundle's bytes (so
     * they are not its bytes): retransformed instead, as if it had never been redefined, and
     * described from what the transformer then makes of it.
     */
    void redefineFailed(Class<?> c, Throwable e) {
        String name = c.getName().replace('.', '/');
        int classId = ClassRegistry.lookup(null, name);
        TraceWriter.log("warning: could not redefine " + c.getName() + " from the class cache (" + e + "); retransforming it");
        described.remove(classId);
        replaced.remove(classId);
        jbgui.instr.PreloadedLayout l = layout;
        jbgui.instr.PreloadedLayout.Slot slot = l == null ? null : l.slot(classId);
        if (slot != null) {
            l.unfill(slot);
            l.breakLayout(name + " could not be redefined from the class cache");
        }
    }

    /** describeOnly's reason for the JVM's java.lang.instrument implementation (sun/instrument/). */
    private static final String AGENT = "agent";

    /** In {@link #described}: a class described as not instrumented, to be left so if retransformed again. */
    private static final int LEFT_ALONE = -1;

    /** The numbering reserved for the classes loaded before the agent, during their retransformation; else null. */
    private volatile jbgui.instr.PreloadedLayout layout;

    /**
     * Before the retransformation of the classes loaded before the agent: reserves, in name
     * order, the class id and method ids of every one the cache's bundle holds, so that their
     * part of static.xml comes out the same in every run (PreloadedLayout).
     */
    void reserveLayout(java.util.List<Class<?>> todo) {
        if (cache == null || todo.isEmpty()) {
            return;
        }
        Class<?>[] sorted = todo.toArray(new Class<?>[0]);
        java.util.Arrays.sort(sorted, new java.util.Comparator<Class<?>>() {
            @Override
            public int compare(Class<?> a, Class<?> b) {
                return a.getName().compareTo(b.getName());
            }
        });
        jbgui.instr.PreloadedLayout l = new jbgui.instr.PreloadedLayout(cache.directory(), sorted.length);
        for (Class<?> c : sorted) {
            Module m = c.getModule();
            if (c.getClassLoader() != null || !m.isNamed() || !systemModules.contains(m.getName())) {
                continue; // the bundle holds the runtime image's boot classes only
            }
            String name = c.getName().replace('.', '/');
            if (describeOnly(name, true) != null) {
                continue; // described, not traced: no ids (the bundle's entry may be from a run with other filters)
            }
            int idCount = cache.bundledIdCount(name);
            if (idCount < 0) {
                continue;
            }
            int base = MethodSpace.INSTANCE.allocate(idCount);
            if (base < 0) {
                break; // the id space is full: the rest is numbered (or not) as it comes
            }
            l.add(name, ClassRegistry.register(null, name), base, idCount);
        }
        layout = l.size() > 0 ? l : null;
    }

    /**
     * After that retransformation: queues the reserved classes' part of static.xml, and describes
     * the classes the JVM never handed to the transformer as not instrumented.
     */
    void layoutDone() {
        jbgui.instr.PreloadedLayout l = layout;
        layout = null;
        if (l == null) {
            return;
        }
        for (jbgui.instr.PreloadedLayout.Slot s : l.unfilled()) {
            described.put(s.classId, LEFT_ALONE);
            TraceWriter.log("error: " + s.name + " was loaded before the agent and never reached its transformer;"
                    + " described as not instrumented");
            TraceWriter.staticInfo(jbgui.output.ClassElement.uninstrumented(s.classId, s.name, 0,
                    ClassRegistry.describe(null), "error", true, false, false, false));
            TraceWriter.classDescribed(ClassRegistry.classCount(), MethodSpace.INSTANCE.used(), false, false);
        }
        TraceWriter.staticInfo(l.fragment(new jbgui.instr.PreloadedLayout.Log() {
            @Override
            public void line(String text) {
                TraceWriter.log(text);
            }
        }, new Runnable() {
            @Override
            public void run() {
                cache.closeUnreadBundle();
            }
        }));
    }

    void retransformFailed(Class<?> c, Throwable e) {
        TraceWriter.log("error: could not retransform " + c.getName() + ": " + e);
    }

    /** The engine's loader, and the chunk codec's module's (CodecModule): their classes are the agent's. */
    private boolean isAgentLoader(ClassLoader loader) {
        return loader != null && (loader == engineLoader || loader == CodecModule.loader());
    }

    private static boolean isAgentClass(String name, ClassLoader loader) {
        return (loader == null && (name.startsWith("jbgui/runtime/") || name.startsWith("jbgui/output/")))
                || name.equals("jbgui/agent/Premain") || name.startsWith("jbgui/agent/Premain$");
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String className, Class<?> redefined,
                            ProtectionDomain domain, byte[] bytes) {
        ThreadTrace guard = Tracer.guardCurrentThread();
        long began = System.nanoTime();
        try {
            return transformGuarded(module, loader, className, redefined, domain, bytes, guard);
        } catch (Throwable e) {
            TraceWriter.log("error: " + className + " left uninstrumented: " + e);
            return null;
        } finally {
            transformNanos.addAndGet(System.nanoTime() - began);
            transformed.incrementAndGet();
            Tracer.transformed(guard, began);
            Tracer.unguard(guard);
        }
    }

    /** Time spent in the transformer, for the summary in agent.log. */
    final java.util.concurrent.atomic.AtomicLong transformNanos = new java.util.concurrent.atomic.AtomicLong();
    final java.util.concurrent.atomic.AtomicInteger transformed = new java.util.concurrent.atomic.AtomicInteger();
    /** The two above at the end of start-up: agent.log's last lines say what came after. */
    long startupTransformNanos;
    int startupTransformed;

    private byte[] transformGuarded(Module module, ClassLoader loader, String className, Class<?> redefined,
                                    ProtectionDomain domain, byte[] bytes, ThreadTrace guard) {
        if (className == null || isAgentLoader(loader) || isAgentClass(className, loader)) {
            return null;
        }
        boolean preloaded = redefined != null;
        int classId = ClassRegistry.register(loader, className);
        if (preloaded && replaced.contains(classId)) {
            return null;
        }
        if (!preloaded) {
            Tracer.classLoaded(guard, classId);
        }
        if (module == null && redefined != null) {
            module = redefined.getModule();
        }
        if (module != null) {
            Engine.readRuntime(inst, module, runtime);
        }
        boolean jdk = module != null && module.isNamed() && systemModules.contains(module.getName())
                && module.getLayer() == ModuleLayer.boot();
        ClassPlan.Mode mode = ClassPlan.Mode.TRACE;
        String reason = describeOnly(className, jdk);
        if (className.equals(HOOK_CLASS)) {
            mode = ClassPlan.Mode.HOOK;
            reason = null;
        } else if (reason != null) {
            mode = ClassPlan.Mode.DESCRIBE;
        }
        Integer knownIds = described.get(classId);
        if (knownIds != null && knownIds == LEFT_ALONE) {
            return null;
        }
        ClassPlan plan = new ClassPlan(classId, className, ClassRegistry.loaderId(loader),
                ClassRegistry.describe(loader), module != null && module.isNamed() ? module.getName() : null,
                preloaded, jdk, !jdk && fromFile(domain), mode, reason);
        jbgui.instr.PreloadedLayout layout = this.layout;
        jbgui.instr.PreloadedLayout.Slot slot = knownIds == null && preloaded && layout != null ? layout.slot(classId) : null;
        jbgui.instr.MethodIds ids = knownIds != null ? new jbgui.instr.MethodIds(knownIds)
                : slot != null ? new jbgui.instr.MethodIds(slot.firstId) : MethodSpace.INSTANCE;
        InstrumentResult result = instrumenter.instrument(bytes, plan, ids);
        if (slot != null && !(result.instrumented && result.firstMethodId == slot.firstId
                && ids.used() == slot.firstId + slot.idCount - 1)) {
            // Not the numbering reserved for it (the bundle's entry did not serve it, and the class
            // came out otherwise): numbered afresh, and the cached copy of static.xml is not this run's.
            layout.breakLayout(className + " did not take its reserved ids");
            slot = null;
            result = instrumenter.instrument(bytes, plan, MethodSpace.INSTANCE);
        }
        if (result.instrumented && result.firstMethodId > 0 && ClassRegistry.neverUnloaded(loader)) {
            ClassRegistry.methods(classId, result.firstMethodId, result.methodIdCount);
        }
        if (DUMP != null && className.startsWith(DUMP_PREFIX)) {
            dump(className, bytes, result.bytes);
        }
        if (knownIds == null) {
            described.put(classId, result.firstMethodId);
            if (slot != null) {
                layout.fill(slot, result.xml, result.originalCrc);
            } else {
                TraceWriter.staticInfo(result.xml);
            }
            TraceWriter.classDescribed(ClassRegistry.classCount(), MethodSpace.INSTANCE.used(), result.instrumented,
                    result.exhausted);
        }
        for (String warning : result.warnings) {
            TraceWriter.log("warning: " + className + ": " + warning);
        }
        return result.bytes;
    }

    /**
     * Whether the class file came from the disk: its code source is a {@code file:} location (a
     * jar or a class directory). Classes a program defines from generated bytes (proxies,
     * reflection accessors, bytecode libraries) have none, or no location.
     */
    private static boolean fromFile(ProtectionDomain domain) {
        if (domain == null) {
            return false;
        }
        java.security.CodeSource source = domain.getCodeSource();
        java.net.URL where = source == null ? null : source.getLocation();
        return where != null && "file".equals(where.getProtocol());
    }

    /** Debugging aid: -Djbgui.dump=DIR[:PREFIX] writes each class's bytes before and after. */
    private static final String DUMP_SPEC = System.getProperty("jbgui.dump");
    private static final String DUMP = DUMP_SPEC == null ? null : DUMP_SPEC.split(":", 2)[0];
    private static final String DUMP_PREFIX = DUMP_SPEC == null || !DUMP_SPEC.contains(":") ? "" : DUMP_SPEC.split(":", 2)[1];

    private static void dump(String className, byte[] before, byte[] after) {
        try {
            java.io.File base = new java.io.File(DUMP, className);
            base.getParentFile().mkdirs();
            java.nio.file.Files.write(new java.io.File(base.getPath() + ".orig.class").toPath(), before);
            if (after != null) {
                java.nio.file.Files.write(new java.io.File(base.getPath() + ".class").toPath(), after);
            }
        } catch (java.io.IOException e) {
            TraceWriter.log("warning: cannot dump " + className + ": " + e);
        }
    }

    /** Why a class is described but not traced ("agent", "jdk-off", "filtered"), or null: traced. */
    private String describeOnly(String className, boolean jdk) {
        if (className.startsWith("sun/instrument/")) {
            return AGENT;
        } else if (jdk && !options.jdk) {
            return "jdk-off";
        } else if (!passesFilters(className)) {
            return "filtered";
        }
        return null;
    }

    private boolean passesFilters(String className) {
        if (!options.include.isEmpty() && !matches(options.include, className)) {
            return false;
        }
        return !matches(options.exclude, className);
    }

    private static boolean matches(java.util.List<String> prefixes, String className) {
        for (String p : prefixes) {
            if (className.startsWith(p)) {
                return true;
            }
        }
        return false;
    }

    /** The trace's one method-id space. */
    static final class MethodSpace {
        static final jbgui.instr.MethodIds INSTANCE = new jbgui.instr.MethodIds(false);
    }
}
