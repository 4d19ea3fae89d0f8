package jbgui.instr;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodTooLargeException;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.MethodNode;

import jbgui.runtime.EventLayout;

/**
 * Instruments one class file and describes it for static.xml.
 *
 * <p>Per method: basic blocks ({@link BlockAnalysis}), original offsets ({@link CodeOffsets}),
 * metrics, call sites and handlers, then the probes ({@link ProbeInserter}). Methods the JIT may
 * replace by an intrinsic ({@code @IntrinsicCandidate}) are left as they are, so their calls look
 * the same whether or not the JIT intrinsified them. A method that the probes push past the
 * 64 KiB code limit is traced at method level only.
 */
public final class ClassInstrumenter {
    private final InstrumentOptions options;
    private final MethodElements elements;

    public ClassInstrumenter(InstrumentOptions options) {
        this.options = options;
        this.elements = new MethodElements(options.instructions, options.listingSeparator);
    }

    /**
     * Nanoseconds spent per phase (read, analyse, probe, write, describe, cache), for agent.log.
     * AtomicLongs rather than an AtomicLongArray, whose VarHandles would be five more JDK classes
     * loaded before the agent instruments the loaded ones (jbgui.output.Utf8 says why that costs).
     */
    public static final java.util.concurrent.atomic.AtomicLong[] PHASE_NANOS = {
        new java.util.concurrent.atomic.AtomicLong(), new java.util.concurrent.atomic.AtomicLong(),
        new java.util.concurrent.atomic.AtomicLong(), new java.util.concurrent.atomic.AtomicLong(),
        new java.util.concurrent.atomic.AtomicLong(), new java.util.concurrent.atomic.AtomicLong()};

    public static String phaseSummary() {
        String[] names = {"read", "analyse", "probe", "write", "describe", "cache"};
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < names.length; i++) {
            s.append(i == 0 ? "" : ", ").append(names[i]).append(' ').append(PHASE_NANOS[i].get() / 1_000_000).append(" ms");
        }
        return s.toString();
    }

    /** What {@link #core} produced: the result, and what describing the class needs. */
    private static final class Core {
        InstrumentResult result;
        ClassNode cn;
        List<MethodFacts> facts;
        boolean describeOnly;
    }

    private ClassCache cache;

    /** Keep instrumented classes on disk between runs (null: never): the JDK's, and the program's read from the disk. */
    public void setCache(ClassCache cache) {
        this.cache = cache;
    }

    public InstrumentResult instrument(byte[] original, ClassPlan plan, MethodIds ids) {
        if (plan.mode == ClassPlan.Mode.TRACE && plan.classId >= 0) {
            InstrumentResult relocated = instrumentRelocatable(original, plan, ids);
            if (relocated != null) {
                return relocated;
            }
        }
        Core c = core(original, plan, ids);
        final ClassNode described = c.cn;
        final List<MethodFacts> describedFacts = c.facts;
        final boolean describedOnly = c.describeOnly;
        final InstrumentResult result = c.result;
        if (plan.mode == ClassPlan.Mode.DESCRIBE && result.bytes == null && !result.exhausted
                && LoaderPrologue.CLASS_LOADER.equals(plan.name)) {
            // Not traced, yet every loader must answer for the runtime's classes (LoaderPrologue).
            result.bytes = LoaderPrologue.only(original);
        }
        result.xml = new Object() {
            @Override
            public String toString() {
                long t3 = System.nanoTime();
                String xml = elements.describe(described, plan, describedFacts, result, describedOnly);
                PHASE_NANOS[4].addAndGet(System.nanoTime() - t3);
                return xml;
            }
        };
        return result;
    }

    /**
     * Instruments with ids relative to 1 (or takes that result from the cache), then relocates it
     * to the ids this run assigns. Null when the class cannot be relocated (the caller then
     * instruments it directly).
     */
    private InstrumentResult instrumentRelocatable(final byte[] original, final ClassPlan plan, MethodIds ids) {
        final boolean cacheable = cache != null && (plan.jdk || plan.fromFile);
        long t0 = System.nanoTime();
        final ClassCache.Key key = cacheable ? cache.key(plan.name, original, !plan.jdk) : null;
        int crc = cacheable ? key.crc : 0;
        CachedClass c = cacheable ? cache.load(key, plan.preloaded) : null;
        PHASE_NANOS[5].addAndGet(System.nanoTime() - t0);
        final boolean fresh = c == null;
        if (c == null) {
            c = relative(original, plan);
            if (c == null) {
                return null;
            }
            c.originalCrc = crc;
            c.originalLength = original.length;
        }
        final int base = ids.allocate(c.idCount);
        if (base < 0) {
            return null;
        }
        final CachedClass cc = c;
        InstrumentResult result = new InstrumentResult();
        result.bytes = c.relocate(base);
        result.instrumented = true;
        result.firstMethodId = base;
        result.methodIdCount = c.idCount;
        result.originalCrc = crc;
        result.warnings.addAll(c.warnings);
        if (cacheable && plan.jdk) {
            cache.noteJdk(plan.name, cc, cc.fromBundle, plan.preloaded);
        }
        result.xml = new jbgui.output.XmlFragment() {
            @Override
            public void writeTo(java.io.OutputStream out) throws java.io.IOException {
                long t3 = System.nanoTime();
                String status = MethodElements.status(plan, true, false);
                try {
                    cc.writeTo(out, plan, base, status);
                } catch (CachedClass.DamagedTemplate e) {
                    // The class came from a damaged cache entry: describe it afresh. Its bytes
                    // (already in the JVM) and ids are those the same instrumentation gives.
                    if (cacheable && !fresh) {
                        cache.discard(key);
                    }
                    CachedClass again = relative(original, plan);
                    if (again == null || again.idCount != cc.idCount) {
                        throw e;
                    }
                    again.writeTo(out, plan, base, status);
                }
                if (cacheable && fresh) {
                    cache.store(key, cc);
                }
                PHASE_NANOS[4].addAndGet(System.nanoTime() - t3);
            }
        };
        return result;
    }

    /**
     * The class as the cache's bundle holds it, relocated to {@code base}, for a class whose
     * original bytes are not at hand (the engine redefines it instead of retransforming it);
     * null when the bundle has no such class.
     */
    public InstrumentResult fromBundle(final ClassPlan plan, final int base) {
        final CachedClass cc = cache == null ? null : cache.bundled(plan.name);
        if (cc == null) {
            return null;
        }
        InstrumentResult result = new InstrumentResult();
        result.bytes = cc.relocate(base);
        result.instrumented = true;
        result.firstMethodId = base;
        result.methodIdCount = cc.idCount;
        result.originalCrc = cc.originalCrc;
        result.warnings.addAll(cc.warnings);
        result.xml = new jbgui.output.XmlFragment() {
            @Override
            public void writeTo(java.io.OutputStream out) throws java.io.IOException {
                long t3 = System.nanoTime();
                cc.writeTo(out, plan, base, MethodElements.status(plan, true, false));
                PHASE_NANOS[4].addAndGet(System.nanoTime() - t3);
            }
        };
        return result;
    }

    /** A class of {@link #fromBundle} was redefined: the bundle served it (for agent.log, and the bundle's next writing). */
    public void redefinedFromBundle(String className) {
        CachedClass cc = cache == null ? null : cache.bundled(className);
        if (cc != null) {
            cache.noteJdk(className, cc, true, true);
        }
    }

    private CachedClass relative(byte[] original, ClassPlan plan) {
        MethodIds scratch = new MethodIds(true);
        final Core core = core(original, plan, scratch);
        if (core.result.bytes == null || !core.result.instrumented) {
            return null;
        }
        CachedClass c = new CachedClass();
        c.bytes = core.result.bytes;
        c.bytesLength = c.bytes.length;
        c.idCount = scratch.used();
        c.instrumented = true;
        c.warnings.addAll(core.result.warnings);
        c.classAttributes = MethodElements.classAttributes(core.cn);
        if (!c.locateConstants(original)) {
            return null;
        }
        c.source = new CachedClass.TemplateSource() {
            @Override
            public String template() {
                return elements.body(core.cn, core.facts, true, false, false, true);
            }
        };
        return c;
    }

    private Core core(byte[] original, ClassPlan plan, MethodIds ids) {
        InstrumentResult result = new InstrumentResult();
        long t0 = System.nanoTime();
        int major = AsmSupport.major(original);
        byte[] readable = AsmSupport.readable(original);
        boolean describeOnly = plan.mode == ClassPlan.Mode.DESCRIBE;
        Set<String> methodOnly = new HashSet<>();
        List<MethodFacts> facts = null;
        ClassNode cn = null;
        for (int attempt = 0; attempt < 8; attempt++) {
            ClassReader cr = new ClassReader(readable);
            cn = readTree(cr, major, describeOnly);
            long t1 = System.nanoTime();
            PHASE_NANOS[0].addAndGet(t1 - t0);
            List<MethodFacts> current = analyze(cn, cr, readable, plan, result);
            t0 = System.nanoTime();
            PHASE_NANOS[1].addAndGet(t0 - t1);
            if (facts == null) {
                int first = allocate(current, ids);
                if (first < 0) {
                    result.exhausted = true;
                    result.warnings.add("method id space exhausted (2^19 ids): class left uninstrumented");
                    describeOnly = true;
                    result.firstMethodId = 0;
                } else {
                    result.firstMethodId = first;
                    for (MethodFacts f : current) {
                        result.methodIdCount += f.pages;
                    }
                }
            } else {
                for (int i = 0; i < current.size(); i++) {
                    current.get(i).id = facts.get(i).id;
                    current.get(i).pages = facts.get(i).pages;
                }
            }
            facts = current;
            if (describeOnly) {
                result.bytes = null;
                break;
            }
            for (MethodFacts f : facts) {
                if (methodOnly.contains(f.node.name + f.node.desc)) {
                    f.status = "method-only";
                }
            }
            Map<String, LoopCycles.Leaf> leaves = staticLeaves(cn, plan, facts);
            for (MethodFacts f : facts) {
                if (f.node.instructions.size() == 0) {
                    continue;
                }
                probe(cn, plan, f, facts.get(0).id, result, leaves);
            }
            long t2 = System.nanoTime();
            PHASE_NANOS[2].addAndGet(t2 - t0);
            try {
                ClassWriter cw = new ClassWriter(cr, 0);
                cn.accept(cw);
                result.bytes = cw.toByteArray();
                t0 = System.nanoTime();
                PHASE_NANOS[3].addAndGet(t0 - t2);
                break;
            } catch (MethodTooLargeException e) {
                String key = e.getMethodName() + e.getDescriptor();
                if (!methodOnly.add(key)) {
                    result.warnings.add("method " + key + " too large even at method level: class left uninstrumented");
                    describeOnly = true;
                    result.bytes = null;
                    for (MethodFacts f : facts) {
                        f.status = "false";
                        f.reason = "error";
                    }
                    break;
                }
                result.warnings.add("method " + key + " exceeds 64 KiB with block probes: traced at method level only");
            }
        }
        result.instrumented = result.bytes != null && plan.mode == ClassPlan.Mode.TRACE;
        Core c = new Core();
        c.result = result;
        c.cn = cn;
        c.facts = facts;
        c.describeOnly = describeOnly;
        return c;
    }

    /** The class as ASM's tree, carrying the class file's own version (see {@link AsmSupport}). */
    private static ClassNode readTree(ClassReader cr, int major, boolean describeOnly) {
        ClassNode cn = new ClassNode();
        cr.accept(cn, describeOnly ? ClassReader.SKIP_CODE | ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES
                : ClassReader.EXPAND_FRAMES);
        cn.version = (cn.version & 0xFFFF0000) | major;
        return cn;
    }

    /**
     * For {@link StaticListing}: the {@code <class>} element with the {@code <method>} elements
     * static.xml holds for this class file when the recorder traces it, made by the same analysis
     * and the same describing code, without inserting probes (they add no block, line, call site or
     * handler of the class's own). Method ids count from 1, as if the class were the first one a
     * trace met; the class and method attributes that depend on a run (loader, instrumentation
     * status) are left out or false. With a method name and descriptor, only that method is
     * described (all are analysed: ids depend on every method's block count).
     */
    String describeWithoutProbes(byte[] original, String methodName, String methodDesc) {
        byte[] readable = AsmSupport.readable(original);
        ClassReader cr = new ClassReader(readable);
        ClassNode cn = readTree(cr, AsmSupport.major(original), false);
        InstrumentResult result = new InstrumentResult();
        List<MethodFacts> facts = analyze(cn, cr, readable, null, result);
        allocate(facts, new MethodIds(true));
        return elements.describeWithoutRun(cn, facts, result.warnings, methodName, methodDesc);
    }

    private List<MethodFacts> analyze(ClassNode cn, ClassReader cr, byte[] bytes, ClassPlan plan, InstrumentResult result) {
        int[][] offsets = cn.methods.isEmpty() || cn.methods.get(0).instructions == null ? null
                : CodeOffsets.compute(cr, bytes, cn.methods.size());
        List<MethodFacts> list = new ArrayList<>(cn.methods.size());
        for (int i = 0; i < cn.methods.size(); i++) {
            MethodFacts f = new MethodFacts();
            f.node = cn.methods.get(i);
            boolean hasCode = f.node.instructions.size() > 0;
            if (hasCode) {
                f.blocks = BlockAnalysis.analyze(f.node, options.precise);
                f.offsets = offsets == null ? null : offsets[i];
                if (f.offsets != null && f.offsets.length != f.blocks.insns.length + 1) {
                    result.warnings.add("offsets of " + f.node.name + f.node.desc + " do not match its instructions");
                    f.offsets = null;
                }
                f.pages = Math.max(1, (f.blocks.blockCount() + EventLayout.BLOCKS_PER_PAGE - 1) / EventLayout.BLOCKS_PER_PAGE);
            } else {
                f.pages = 1;
            }
            list.add(f);
        }
        return list;
    }

    private static int allocate(List<MethodFacts> facts, MethodIds ids) {
        int total = 0;
        for (MethodFacts f : facts) {
            total += f.pages;
        }
        int first = ids.allocate(total);
        if (first < 0) {
            return -1;
        }
        int next = first;
        for (MethodFacts f : facts) {
            f.id = next;
            next += f.pages;
        }
        return first;
    }

    /**
     * The class's static methods that get the leaf probe with an implied block (LeafMethods,
     * BlockElision), as they are before any probe: a loop record may stand for their calls
     * (LoopCycles). Empty unless loop records are on.
     */
    private Map<String, LoopCycles.Leaf> staticLeaves(ClassNode cn, ClassPlan plan, List<MethodFacts> facts) {
        Map<String, LoopCycles.Leaf> leaves = new java.util.HashMap<>();
        if (!options.loopRecords || !options.entryElision || plan.mode != ClassPlan.Mode.TRACE) {
            return leaves;
        }
        for (MethodFacts f : facts) {
            MethodNode mn = f.node;
            boolean blocks = options.blockLevel && options.blockEvents && !"method-only".equals(f.status);
            if (!blocks || mn.instructions.size() == 0 || (mn.access & Opcodes.ACC_STATIC) == 0
                    || MethodFacts.isIntrinsic(mn) || !BlockElision.entryImplied(mn, f.blocks)) {
                continue;
            }
            if (LeafMethods.isLeaf(mn, cn.name, f.blocks, true, true)) {
                leaves.put(mn.name + mn.desc, new LoopCycles.Leaf(f.id, f.blocks.insns, mn.maxLocals, mn.maxStack));
            } else if ((cn.version & 0xFFFF) >= Opcodes.V1_6) {
                // A pure leaf of several blocks: its body in place needs frames (version 50 on).
                LoopCycles.Leaf leaf = PureLeaves.of(mn, cn.name, f.blocks, f.id);
                if (leaf != null) {
                    leaves.put(mn.name + mn.desc, leaf);
                }
            }
        }
        return leaves;
    }

    private void probe(ClassNode cn, ClassPlan plan, MethodFacts f, int classFirstId, InstrumentResult result,
                       Map<String, LoopCycles.Leaf> leaves) {
        MethodNode mn = f.node;
        if (plan.mode == ClassPlan.Mode.HOOK) {
            if (mn.name.equals("transform")) {
                ProbeInserter.hook(mn, cn.name, cn.version, f.blocks);
            }
            f.status = "false";
            f.reason = "agent";
            return;
        }
        if (MethodFacts.isIntrinsic(mn)) {
            f.status = "false";
            f.reason = "intrinsic";
            return;
        }
        boolean blocks = options.blockLevel && options.blockEvents && !"method-only".equals(f.status);
        boolean entryImplied = blocks && options.entryElision && BlockElision.entryImplied(mn, f.blocks);
        if (LeafMethods.isLeaf(mn, cn.name, f.blocks, blocks, entryImplied)) {
            ProbeInserter.leaf(mn, classFirstId, f.id, options.receiverEvents, entryImplied);
            return;
        }
        boolean[] covered = options.exceptionExitEvents ? handlerCoverage(cn.name, mn, f, result) : null;
        ProbeInserter.trace(mn, cn.name, cn.version, f.blocks, classFirstId, f.id, blocks, options.receiverEvents,
                options.exceptionExitEvents, options.blockingStamps, covered, entryImplied,
                options.loopRecords ? leaves : null);
    }

    /**
     * Which instructions the exception-exit handler covers: where {@code this} is initialized
     * (constructors, {@link CtorInit}) and no monitor is held ({@link MonitorDepth}). Null: all.
     */
    private static boolean[] handlerCoverage(String owner, MethodNode mn, MethodFacts f, InstrumentResult result) {
        AbstractInsnNode[] insns = f.blocks.insns;
        boolean[] covered = null;
        try {
            if ("<init>".equals(mn.name)) {
                boolean[] uninit = CtorInit.uninitialized(owner, mn, f.blocks);
                covered = new boolean[insns.length];
                for (int i = 0; i < insns.length; i++) {
                    covered[i] = !uninit[i];
                }
            }
            if (MonitorDepth.hasMonitors(insns)) {
                int[] depth = MonitorDepth.depths(owner, mn, insns);
                if (covered == null) {
                    covered = new boolean[insns.length];
                    java.util.Arrays.fill(covered, true);
                }
                for (int i = 0; i < insns.length; i++) {
                    covered[i] &= depth[i] == 0;
                }
            }
        } catch (Exception e) {
            result.warnings.add("method " + mn.name + mn.desc + " not analysed (" + e.getMessage()
                    + "): its exceptional exits are not recorded");
            covered = new boolean[insns.length];
        }
        return covered;
    }
}
