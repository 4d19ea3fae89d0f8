package jbgui.instr;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodTooLargeException;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.AnnotationNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.InvokeDynamicInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LineNumberNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TryCatchBlockNode;

import jbgui.output.Xml;
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
    private static final Set<String> INTRINSIC_ANNOTATIONS = Set.of(
            "Ljdk/internal/vm/annotation/IntrinsicCandidate;", "Ljdk/internal/HotSpotIntrinsicCandidate;");

    private final boolean blockLevel;
    private final boolean precise;
    private final boolean instructions;
    private final boolean blockEvents;
    private final boolean receiverEvents;
    private final boolean exceptionExitEvents;
    /** Clock stamps around blocking calls (agent option {@code blocking}); see BlockingCalls. */
    private boolean blockingStamps = true;
    /**
     * What joins the instruction lines of a block's listing: a newline in static.xml. StaticListing
     * uses a character reference to a carriage return instead, which no listed line can contain
     * ({@link Xml#text} replaces control characters), so that a string constant holding a newline
     * cannot be taken for the start of the next instruction.
     */
    private final String listingSeparator;

    public ClassInstrumenter(boolean blockLevel, boolean precise, boolean instructions, boolean blockEvents,
                             boolean receiverEvents, boolean exceptionExitEvents) {
        this(blockLevel, precise, instructions, blockEvents, receiverEvents, exceptionExitEvents, "\n");
    }

    ClassInstrumenter(boolean blockLevel, boolean precise, boolean instructions, boolean blockEvents,
                      boolean receiverEvents, boolean exceptionExitEvents, String listingSeparator) {
        this.listingSeparator = listingSeparator;
        this.blockLevel = blockLevel;
        this.precise = precise;
        this.instructions = instructions;
        this.blockEvents = blockEvents;
        this.receiverEvents = receiverEvents;
        this.exceptionExitEvents = exceptionExitEvents;
    }

    /** Per-method facts gathered before instrumentation. */
    private static final class MethodFacts {
        MethodNode node;
        BlockAnalysis blocks;
        int[] offsets;
        int id;
        int pages;
        String status = "true";
        String reason;
    }

    /** Nanoseconds spent per phase (read, analyse, probe, write, describe), for agent.log. */
    public static final java.util.concurrent.atomic.AtomicLongArray PHASE_NANOS = new java.util.concurrent.atomic.AtomicLongArray(6);

    public static String phaseSummary() {
        String[] names = {"read", "analyse", "probe", "write", "describe", "cache"};
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < names.length; i++) {
            s.append(i == 0 ? "" : ", ").append(names[i]).append(' ').append(PHASE_NANOS.get(i) / 1_000_000).append(" ms");
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

    public void setBlockingStamps(boolean on) {
        blockingStamps = on;
    }

    /** Keep instrumented JDK classes on disk between runs (null: never). */
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
                String xml = describe(described, plan, describedFacts, result, describedOnly);
                PHASE_NANOS.addAndGet(4, System.nanoTime() - t3);
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
    private InstrumentResult instrumentRelocatable(byte[] original, ClassPlan plan, MethodIds ids) {
        final boolean cacheable = cache != null && plan.jdk;
        long t0 = System.nanoTime();
        CachedClass c = cacheable ? cache.load(plan.name, original) : null;
        PHASE_NANOS.addAndGet(5, System.nanoTime() - t0);
        final boolean fresh = c == null;
        if (c == null) {
            c = relative(original, plan);
            if (c == null) {
                return null;
            }
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
        result.warnings.addAll(c.warnings);
        result.xml = new jbgui.output.XmlFragment() {
            @Override
            public void writeTo(java.io.OutputStream out) throws java.io.IOException {
                long t3 = System.nanoTime();
                cc.writeTo(out, plan, base, status(plan, true, false));
                if (cacheable && fresh) {
                    cache.store(plan.name, original, cc);
                }
                PHASE_NANOS.addAndGet(4, System.nanoTime() - t3);
            }
        };
        return result;
    }

    private CachedClass relative(byte[] original, ClassPlan plan) {
        MethodIds scratch = new MethodIds(true);
        final Core core = core(original, plan, scratch);
        if (core.result.bytes == null || !core.result.instrumented) {
            return null;
        }
        CachedClass c = new CachedClass();
        c.bytes = core.result.bytes;
        c.idCount = scratch.used();
        c.instrumented = true;
        c.warnings.addAll(core.result.warnings);
        c.classAttributes = classAttributes(core.cn);
        if (!c.locateConstants(original)) {
            return null;
        }
        c.source = new CachedClass.TemplateSource() {
            @Override
            public String template() {
                return body(core.cn, core.facts, true, false, false, true);
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
            PHASE_NANOS.addAndGet(0, t1 - t0);
            List<MethodFacts> current = analyze(cn, cr, readable, plan, result);
            t0 = System.nanoTime();
            PHASE_NANOS.addAndGet(1, t0 - t1);
            if (facts == null) {
                int first = allocate(current, ids);
                if (first < 0) {
                    result.exhausted = true;
                    result.warnings.add("method id space exhausted (2^19 ids): class left uninstrumented");
                    describeOnly = true;
                    result.firstMethodId = 0;
                } else {
                    result.firstMethodId = first;
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
                if (f.node.instructions.size() == 0) {
                    continue;
                }
                if (methodOnly.contains(f.node.name + f.node.desc)) {
                    f.status = "method-only";
                }
                probe(cn, plan, f, result);
            }
            long t2 = System.nanoTime();
            PHASE_NANOS.addAndGet(2, t2 - t0);
            try {
                ClassWriter cw = new ClassWriter(cr, 0);
                cn.accept(cw);
                result.bytes = cw.toByteArray();
                t0 = System.nanoTime();
                PHASE_NANOS.addAndGet(3, t0 - t2);
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
        StringBuilder s = new StringBuilder(4096);
        s.append("<class").append(classAttributes(cn)).append(">\n");
        for (String warning : result.warnings) {
            s.append(" <warning>").append(Xml.text(warning)).append("</warning>\n");
        }
        for (MethodFacts f : facts) {
            if (methodName == null || (f.node.name.equals(methodName) && f.node.desc.equals(methodDesc))) {
                describeMethod(s, cn, f, false, false, true, false);
            }
        }
        return s.append("</class>\n").toString();
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
                f.blocks = BlockAnalysis.analyze(f.node, precise);
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

    private void probe(ClassNode cn, ClassPlan plan, MethodFacts f, InstrumentResult result) {
        MethodNode mn = f.node;
        if (plan.mode == ClassPlan.Mode.HOOK) {
            if (mn.name.equals("transform")) {
                ProbeInserter.hook(mn, cn.name, cn.version, f.blocks);
            }
            f.status = "false";
            f.reason = "agent";
            return;
        }
        if (isIntrinsic(mn)) {
            f.status = "false";
            f.reason = "intrinsic";
            return;
        }
        boolean[] covered = exceptionExitEvents ? handlerCoverage(cn.name, mn, f, result) : null;
        boolean blocks = blockLevel && blockEvents && !"method-only".equals(f.status);
        ProbeInserter.trace(mn, cn.name, cn.version, f.blocks, f.id, blocks, receiverEvents, exceptionExitEvents,
                blockingStamps, covered);
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

    private static boolean isIntrinsic(MethodNode mn) {
        for (List<AnnotationNode> list : java.util.Arrays.asList(mn.visibleAnnotations, mn.invisibleAnnotations)) {
            if (list != null) {
                for (AnnotationNode a : list) {
                    if (INTRINSIC_ANNOTATIONS.contains(a.desc)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ static.xml

    private String describe(ClassNode cn, ClassPlan plan, List<MethodFacts> facts, InstrumentResult result,
                            boolean describeOnly) {
        StringBuilder s = new StringBuilder(4096);
        s.append(plan.openTag(classAttributes(cn), status(plan, result.instrumented, result.exhausted)));
        s.append(body(cn, facts, result.instrumented, result.exhausted, describeOnly, false));
        s.append("</class>\n");
        return s.toString();
    }

    /** The attributes of {@code <class>} that depend only on the class file. */
    private static String classAttributes(ClassNode cn) {
        StringBuilder s = new StringBuilder(128);
        s.append(" name=\"").append(Xml.attr(cn.name)).append('"');
        if (cn.superName != null) {
            s.append(" super=\"").append(Xml.attr(cn.superName)).append('"');
        }
        if (cn.interfaces != null && !cn.interfaces.isEmpty()) {
            s.append(" interfaces=\"").append(Xml.attr(String.join(" ", cn.interfaces))).append('"');
        }
        s.append(" access=\"").append(cn.access).append("\" version=\"").append(cn.version & 0xFFFF).append('"');
        if (cn.sourceFile != null) {
            s.append(" source_file=\"").append(Xml.attr(cn.sourceFile)).append('"');
        }
        return s.toString();
    }

    static String status(ClassPlan plan, boolean instrumented, boolean exhausted) {
        if (instrumented) {
            return " instrumented=\"true\"";
        }
        String reason = exhausted ? "method-id-space-exhausted"
                : plan.reason != null ? plan.reason : plan.mode == ClassPlan.Mode.HOOK ? "agent" : "error";
        return " instrumented=\"false\" reason=\"" + reason + "\"";
    }

    /** The {@code <method>} elements; with {@code template}, ids are markers for CachedClass.render. */
    private String body(ClassNode cn, List<MethodFacts> facts, boolean instrumented, boolean exhausted,
                        boolean describeOnly, boolean template) {
        StringBuilder s = new StringBuilder(4096);
        for (MethodFacts f : facts) {
            describeMethod(s, cn, f, instrumented, exhausted, describeOnly, template);
        }
        return s.toString();
    }

    private static void methodId(StringBuilder s, long id, boolean template) {
        if (template) {
            s.append(CachedClass.MARK_METHOD).append(id).append(CachedClass.MARK_END);
        } else {
            s.append(id);
        }
    }

    private static void blockId(StringBuilder s, long id, boolean template) {
        if (template) {
            s.append(CachedClass.MARK_BLOCK).append(id).append(CachedClass.MARK_END);
        } else {
            s.append(id);
        }
    }

    private void describeMethod(StringBuilder s, ClassNode cn, MethodFacts f, boolean instrumented, boolean exhausted,
                                boolean describeOnly, boolean template) {
        MethodNode mn = f.node;
        boolean hasCode = mn.instructions.size() > 0 && f.blocks != null;
        s.append(" <method");
        if (!exhausted) {
            s.append(" id=\"");
            methodId(s, f.id, template);
            s.append('"');
        }
        s.append(" name=\"").append(Xml.attr(mn.name)).append("\" desc=\"").append(Xml.attr(mn.desc))
                .append("\" access=\"").append(mn.access).append('"')
                .append(" static=\"").append((mn.access & Opcodes.ACC_STATIC) != 0).append('"')
                .append(" native=\"").append((mn.access & Opcodes.ACC_NATIVE) != 0).append('"')
                .append(" abstract=\"").append((mn.access & Opcodes.ACC_ABSTRACT) != 0).append('"');
        if (isIntrinsic(mn)) {
            s.append(" intrinsic=\"true\"");
        }
        if (!hasCode) {
            s.append(" blocks=\"0\" block_pages=\"1\"/>\n");
            return;
        }
        BlockAnalysis ba = f.blocks;
        int codeLength = f.offsets == null ? -1 : f.offsets[f.offsets.length - 1];
        s.append(" blocks=\"").append(ba.blockCount()).append("\" block_pages=\"").append(f.pages)
                .append("\" code_length=\"").append(codeLength).append('"');
        if (describeOnly || !instrumented) {
            s.append(" instrumented=\"false\"");
        } else {
            s.append(" instrumented=\"").append(f.status).append('"');
            if (f.reason != null) {
                s.append(" reason=\"").append(f.reason).append('"');
            }
        }
        s.append(">\n");
        int[] lines = lineOfEach(mn, ba);
        for (int b = 0; b < ba.blockCount(); b++) {
            describeBlock(s, cn, f, b, lines, template);
        }
        s.append(" </method>\n");
    }

    private void describeBlock(StringBuilder s, ClassNode cn, MethodFacts f, int b, int[] lines, boolean template) {
        BlockAnalysis ba = f.blocks;
        int from = ba.blockStarts[b];
        int to = ba.blockEnd(b);
        int page = f.id + b / EventLayout.BLOCKS_PER_PAGE;
        long blockId = ((long) page << EventLayout.METHOD_SHIFT) | (b % EventLayout.BLOCKS_PER_PAGE);
        s.append("  <basic_block id=\"");
        blockId(s, blockId, template);
        s.append("\" index=\"").append(b).append('"');
        if (f.offsets != null) {
            s.append(" start=\"").append(f.offsets[from]).append("\" end=\"").append(f.offsets[to]).append('"');
        }
        Set<Integer> blockLines = new LinkedHashSet<>();
        for (int i = from; i < to; i++) {
            if (lines[i] > 0) {
                blockLines.add(lines[i]);
            }
        }
        if (!blockLines.isEmpty()) {
            s.append(" lines=\"");
            boolean firstLine = true;
            for (int line : blockLines) {
                s.append(firstLine ? "" : " ").append(line);
                firstLine = false;
            }
            s.append('"');
        }
        s.append(" metrics=\"");
        int[] m = Metrics.of(ba.insns, from, to, cn.name);
        for (int k = 0; k < m.length; k++) {
            s.append(k == 0 ? "" : " ").append(m[k]);
        }
        s.append("\">\n");
        boolean anyCall = false;
        for (int i = from; i < to; i++) {
            AbstractInsnNode insn = ba.insns[i];
            if (insn instanceof MethodInsnNode || insn instanceof InvokeDynamicInsnNode) {
                if (!anyCall) {
                    s.append("   <call_site_list>\n");
                    anyCall = true;
                }
                s.append("    <call_site call=\"");
                if (insn instanceof MethodInsnNode) {
                    MethodInsnNode mi = (MethodInsnNode) insn;
                    s.append(Xml.attr(mi.owner)).append(':').append(Xml.attr(mi.name)).append(Xml.attr(mi.desc)).append('"');
                    s.append(" type=\"").append(org.objectweb.asm.util.Printer.OPCODES[mi.getOpcode()]).append('"');
                    if (mi.itf) {
                        s.append(" itf=\"true\"");
                    }
                } else {
                    InvokeDynamicInsnNode d = (InvokeDynamicInsnNode) insn;
                    s.append(':').append(Xml.attr(d.name)).append(Xml.attr(d.desc)).append("\" type=\"INVOKEDYNAMIC\"");
                    s.append(" bootstrap=\"").append(Xml.attr(d.bsm.getOwner())).append(':').append(Xml.attr(d.bsm.getName()))
                            .append(Xml.attr(d.bsm.getDesc())).append('"');
                }
                if (f.offsets != null) {
                    s.append(" offset=\"").append(f.offsets[i]).append('"');
                }
                s.append("/>\n");
            }
        }
        if (anyCall) {
            s.append("   </call_site_list>\n");
        }
        boolean anyHandler = false;
        for (TryCatchBlockNode tc : f.node.tryCatchBlocks) {
            Integer start = ba.labelIndex.get(tc.start);
            Integer end = ba.labelIndex.get(tc.end);
            if (start == null || end == null || from < start || from >= end) {
                continue; // not a handler of the original code (ours are added after analysis), or not covering
            }
            if (!anyHandler) {
                s.append("   <exception_handler_list>\n");
                anyHandler = true;
            }
            int handlerBlock = ba.blockOf[ba.labelIndex.get(tc.handler)];
            int hPage = f.id + handlerBlock / EventLayout.BLOCKS_PER_PAGE;
            long hId = ((long) hPage << EventLayout.METHOD_SHIFT) | (handlerBlock % EventLayout.BLOCKS_PER_PAGE);
            s.append("    <exception_handler basic_block_id=\"");
            blockId(s, hId, template);
            s.append('"');
            if (tc.type != null) {
                s.append(" type=\"").append(Xml.attr(tc.type)).append('"');
            }
            s.append("/>\n");
        }
        if (anyHandler) {
            s.append("   </exception_handler_list>\n");
        }
        if (instructions) {
            s.append("   <instructions>");
            for (int i = from; i < to; i++) {
                int offset = f.offsets == null ? i : f.offsets[i];
                s.append(i == from ? "" : listingSeparator).append(Xml.text(Listing.line(ba.insns[i], offset, l -> {
                    Integer idx = ba.labelIndex.get(l);
                    return idx == null ? -1 : f.offsets == null ? idx : f.offsets[idx];
                })));
            }
            s.append("</instructions>\n");
        }
        s.append("  </basic_block>\n");
    }

    /** The source line of each instruction (0 where the class has none). */
    private static int[] lineOfEach(MethodNode mn, BlockAnalysis ba) {
        int[] lines = new int[ba.insns.length];
        java.util.Map<LabelNode, Integer> lineAt = new java.util.IdentityHashMap<>();
        for (AbstractInsnNode n = mn.instructions.getFirst(); n != null; n = n.getNext()) {
            if (n instanceof LineNumberNode) {
                lineAt.put(((LineNumberNode) n).start, ((LineNumberNode) n).line);
            }
        }
        int current = 0;
        int k = 0;
        for (AbstractInsnNode n = mn.instructions.getFirst(); n != null && k < lines.length; n = n.getNext()) {
            if (n instanceof LabelNode && lineAt.containsKey(n)) {
                current = lineAt.get(n);
            } else if (n == ba.insns[k]) {
                lines[k++] = current;
            }
        }
        return lines;
    }
}
