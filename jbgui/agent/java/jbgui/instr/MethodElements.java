package jbgui.instr;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.InvokeDynamicInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LineNumberNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TryCatchBlockNode;

import jbgui.output.ClassElement;
import jbgui.output.Xml;
import jbgui.output.Text;
import jbgui.runtime.EventLayout;

/**
 * The one writer of static.xml's elements below {@code <class>} (docs/trace-format.md): a
 * method's {@code <method>}, its {@code <basic_block>}s with lines, metrics, call sites, handlers
 * and (optionally) the listing; and the whole {@code <class>} element of a described class, its
 * tags written by {@link ClassElement}. Used for traces ({@link ClassInstrumenter}), for the
 * instrumented-class cache's templates ({@link CachedClass}) and for listings without a trace
 * ({@link StaticListing}).
 */
final class MethodElements {
    private final boolean instructions;
    private final String listingSeparator;

    MethodElements(boolean instructions, String listingSeparator) {
        this.instructions = instructions;
        this.listingSeparator = listingSeparator;
    }

    /** The whole {@code <class>} element of a class this run describes. */
    String describe(ClassNode cn, ClassPlan plan, List<MethodFacts> facts, InstrumentResult result,
                    boolean describeOnly) {
        Text s = new Text(4096);
        s.append(plan.openTag(classAttributes(cn), status(plan, result.instrumented, result.exhausted)));
        s.append(body(cn, facts, result.instrumented, result.exhausted, describeOnly, false));
        s.append(ClassElement.close());
        return s.toString();
    }

    /**
     * For {@link StaticListing}: the {@code <class>} element with the class file's attributes only,
     * its warnings, and the elements of every method (or of the one named).
     */
    String describeWithoutRun(ClassNode cn, List<MethodFacts> facts, List<String> warnings, String methodName,
                              String methodDesc) {
        Text s = new Text(4096);
        s.append(ClassElement.openWithoutRun(classAttributes(cn)));
        for (String warning : warnings) {
            s.append(ClassElement.warning(warning));
        }
        for (MethodFacts f : facts) {
            if (methodName == null || (f.node.name.equals(methodName) && f.node.desc.equals(methodDesc))) {
                describeMethod(s, cn, f, false, false, true, false);
            }
        }
        return s.append(ClassElement.close()).toString();
    }

    /** The attributes of {@code <class>} that depend only on the class file. */
    static String classAttributes(ClassNode cn) {
        return ClassElement.fileAttributes(cn.name, cn.superName, cn.interfaces, cn.access, cn.version, cn.sourceFile);
    }

    static String status(ClassPlan plan, boolean instrumented, boolean exhausted) {
        if (instrumented) {
            return ClassElement.status(true, null);
        }
        return ClassElement.status(false, exhausted ? "method-id-space-exhausted"
                : plan.reason != null ? plan.reason : plan.mode == ClassPlan.Mode.HOOK ? "agent" : "error");
    }

    /** The {@code <method>} elements; with {@code template}, ids are markers for CachedClass.render. */
    String body(ClassNode cn, List<MethodFacts> facts, boolean instrumented, boolean exhausted,
                        boolean describeOnly, boolean template) {
        Text s = new Text(4096);
        for (MethodFacts f : facts) {
            describeMethod(s, cn, f, instrumented, exhausted, describeOnly, template);
        }
        return s.toString();
    }

    private static void methodId(Text s, long id, boolean template) {
        if (template) {
            s.append(CachedClass.MARK_METHOD).append(id).append(CachedClass.MARK_END);
        } else {
            s.append(id);
        }
    }

    private static void blockId(Text s, long id, boolean template) {
        if (template) {
            s.append(CachedClass.MARK_BLOCK).append(id).append(CachedClass.MARK_END);
        } else {
            s.append(id);
        }
    }

    void describeMethod(Text s, ClassNode cn, MethodFacts f, boolean instrumented, boolean exhausted,
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
        if (MethodFacts.isIntrinsic(mn)) {
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

    private void describeBlock(Text s, ClassNode cn, MethodFacts f, int b, int[] lines, boolean template) {
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
        int sitesBefore = 0;
        int monitor = -1;
        for (int i = from; i < to; i++) {
            AbstractInsnNode insn = ba.insns[i];
            if (insn instanceof MethodInsnNode || insn instanceof InvokeDynamicInsnNode) {
                sitesBefore++;
            } else if (insn.getOpcode() == Opcodes.MONITORENTER) {
                monitor = sitesBefore;
            }
        }
        if (monitor >= 0) {
            // how many of the block's call sites come before its (last) monitorenter, which the
            // recorder stamps when it waited: the explorer then knows which natives beside it ran
            // before the wait and which after
            s.append(" monitorenter=\"").append(monitor).append('"');
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
                    if (BlockingCalls.isBlocking(mi)) {
                        // the calls the recorder stamps the clock around: the explorer gives the
                        // wait to this call, not to a native beside it at the same event
                        s.append(" blocking=\"true\"");
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
            java.util.function.ToIntFunction<LabelNode> labelOffsets = new LabelOffsets(ba, f);
            s.append("   <instructions>");
            for (int i = from; i < to; i++) {
                int offset = f.offsets == null ? i : f.offsets[i];
                s.append(i == from ? "" : listingSeparator).append(Xml.text(Listing.line(ba.insns[i], offset, labelOffsets)));
            }
            s.append("</instructions>\n");
        }
        s.append("  </basic_block>\n");
    }

    /** The source line of each instruction (0 where the class has none). */
    /** A jump target's offset in the listing (a class, not a lambda: no invokedynamic in the agent). */
    private static final class LabelOffsets implements java.util.function.ToIntFunction<LabelNode> {
        private final BlockAnalysis ba;
        private final MethodFacts f;

        LabelOffsets(BlockAnalysis ba, MethodFacts f) {
            this.ba = ba;
            this.f = f;
        }

        @Override
        public int applyAsInt(LabelNode l) {
            Integer idx = ba.labelIndex.get(l);
            return idx == null ? -1 : f.offsets == null ? idx : f.offsets[idx];
        }
    }

    private static int[] lineOfEach(MethodNode mn, BlockAnalysis ba) {
        int[] lines = new int[ba.insns.length];
        java.util.Map<LabelNode, Integer> lineAt = new java.util.IdentityHashMap<>();
        java.util.Set<AbstractInsnNode> present = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (AbstractInsnNode n = mn.instructions.getFirst(); n != null; n = n.getNext()) {
            if (n instanceof LineNumberNode) {
                lineAt.put(((LineNumberNode) n).start, ((LineNumberNode) n).line);
            }
            present.add(n);
        }
        int current = 0;
        int k = 0;
        for (AbstractInsnNode n = mn.instructions.getFirst(); n != null && k < lines.length; n = n.getNext()) {
            if (n instanceof LabelNode && lineAt.containsKey(n)) {
                current = lineAt.get(n);
            } else if (n == ba.insns[k]) {
                lines[k++] = current;
                // An instruction the probes replaced is no longer in the list: a static leaf's
                // call, whose body now stands in its place (ProbeInserter.inlined). It takes the
                // line of the instruction before it, where it stood (its arguments' loads). The
                // walk used to wait for it and gave every later instruction no line at all.
                while (k < lines.length && !present.contains(ba.insns[k])) {
                    lines[k++] = current;
                }
            }
        }
        return lines;
    }
}
