package jbgui.instr;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.FrameNode;
import org.objectweb.asm.tree.InsnList;
import org.objectweb.asm.tree.InsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;
import org.objectweb.asm.tree.TryCatchBlockNode;
import org.objectweb.asm.tree.TypeInsnNode;
import org.objectweb.asm.tree.VarInsnNode;

import jbgui.runtime.EventLayout;

/**
 * Writes the probes into a method (where they go is {@link BlockAnalysis}'s business):
 *
 * <pre>
 *   entry:        ldc FIRST; [push K; bipush 11; ishl; iadd;] istore B; aconst_null; astore S;
 *                 [Lstart] iload B; (aload 0;) invokestatic enter…; astore S
 *   each block:   aload S; iload B; push INDEX; invokestatic block      (stack-neutral)
 *   each return:  aload S; iload B; invokestatic exit                   (stack-neutral, value stays below)
 *   handler:      [Lh] astore T; aload T; aload S; iload B; invokestatic exceptionExit; aload T; athrow
 *                 (last in the table)
 *   blocking call: aload S; invokestatic blockingEnter; CALL; aload S; invokestatic blockingExit
 *   monitorenter:  aload S; invokestatic monitorEnter; MONITORENTER; aload S; invokestatic monitorEntered
 *                 (the second inside the synchronized block's own handler range: heldStamp)
 *   loadClass(String): the {@link LoaderPrologue}, before everything else
 *   a leaf method ({@link LeafMethods}), instead of all the above:
 *                 ldc FIRST; [push K; …]; [iconst_1; ior;] (aload 0; ldc THIS_CLASS;) invokestatic leaf
 * </pre>
 *
 * S and B (and T) are new locals after the method's own, so no existing code touches them. B holds
 * the method's start event, from which the runtime derives its block, end and exception-exit words
 * ({@link EventLayout#BLOCK_FROM_START}): the only event constant a method adds to the constant pool
 * is START, and START itself is computed from the class's one event constant FIRST, the start word of
 * its first method id: a method whose id is K after the class's first has START = FIRST + (K << 11)
 * (EventLayout.METHOD_SHIFT). Retransforming the classes loaded before the agent spends much of
 * start-up in HotSpot's constant-pool merge, which searches the whole old pool for every appended
 * entry (VM_RedefineClasses::merge_constant_pools, seen with perf): a constant per block, then one
 * per method (158 of String's 183 appended entries), made it grow with the code; now a class
 * appends one int and the few references to the runtime.
 * Every inserted sequence leaves the operand stack as it found it, so the method's stack-map frames
 * stay valid once S and B are added to their locals; the class writer never computes frames (it
 * would load classes).
 * A block that begins at a {@code new} keeps frames that name that {@code new} as an uninitialized
 * type pointing at it (a fresh label after the probe).
 */
final class ProbeInserter {
    private ProbeInserter() {}

    static final String TRACER = "jbgui/runtime/Tracer";
    static final String TRACE = "jbgui/runtime/ThreadTrace";
    private static final String TRACE_DESC = "L" + TRACE + ";";

    /**
     * @param covered per instruction of {@code ba}: whether the exception-exit handler covers it
     *     (null: all); see ClassInstrumenter.handlerCoverage
     */
    static void trace(MethodNode mn, String owner, int version, BlockAnalysis ba, int classFirstId, int methodId, boolean blocks,
                      boolean receiver, boolean exceptionExit, boolean stamps, boolean[] covered, boolean entryImplied,
                      Map<String, LoopCycles.Leaf> leaves) {
        boolean frames = (version & 0xFFFF) >= Opcodes.V1_6;
        boolean isStatic = (mn.access & Opcodes.ACC_STATIC) != 0;
        boolean isCtor = "<init>".equals(mn.name);
        int slot = mn.maxLocals;
        int base = slot + 1;
        InsnList code = mn.instructions;
        boolean firstIsTarget = ba.insns.length > 0 && isTarget(mn, ba, 0);
        if (covered == null) {
            covered = new boolean[ba.insns.length];
            java.util.Arrays.fill(covered, true);
        }
        // Loop records (LoopCycles): a mark local M, then a step counter per loop, after S and B.
        List<LoopCycles.Loop> loops = blocks && leaves != null && exceptionExit
                ? LoopCycles.find(mn, owner, ba, covered, leaves) : List.of();
        int mark = base + 1;
        int counters = mark + 1;
        int loopLocals = loops.isEmpty() ? 0 : 1 + loops.size();
        // A loop whose cycle calls a pure leaf of several blocks (PureLeaves) also keeps its
        // pending record's call in a local P: the block k, and above it the path the record's
        // calls took (EventLayout.LOOP_CALL_PATH_SHIFT), passed where a constant k is otherwise.
        int[] paths = new int[loops.size()];
        for (int i = 0; i < loops.size(); i++) {
            LoopCycles.Loop l = loops.get(i);
            paths[i] = l.leaf != null && l.leaf.multi ? mark + loopLocals++ : -1;
        }
        if (frames) {
            for (AbstractInsnNode n = code.getFirst(); n != null; n = n.getNext()) {
                if (n instanceof FrameNode) {
                    FrameNode f = (FrameNode) n;
                    f.local = withState(f.local, slot, loopLocals);
                }
            }
        }
        Map<LabelNode, LabelNode> uninitLabels = frames ? uninitializedLabels(mn) : new IdentityHashMap<>();

        // Exception-exit ranges: the instructions where an exception can leave the frame and the
        // handler is verifiable and compilable: `this` initialized (constructors), no monitor held.
        List<LabelNode[]> ranges = new ArrayList<>();
        LabelNode exitHandler = null;
        LabelNode end = new LabelNode();
        LabelNode start = new LabelNode();
        if (exceptionExit) {
            int i = 0;
            while (i < ba.insns.length) {
                if (!covered[i]) {
                    i++;
                    continue;
                }
                int j = i;
                while (j < ba.insns.length && covered[j]) {
                    j++;
                }
                LabelNode from = start;
                if (i > 0 || isCtor) {
                    from = new LabelNode();
                    code.insertBefore(ba.insns[i], from);
                }
                LabelNode to = end;
                if (j < ba.insns.length) {
                    to = new LabelNode();
                    code.insertBefore(ba.insns[j], to);
                }
                ranges.add(new LabelNode[] {from, to});
                i = j;
            }
        }

        // Code placed after the method's own (a loop header's full record, loopProbes), which the
        // exception-exit handler covers.
        InsnList outOfLine = new InsnList();
        if (blocks) {
            boolean[] selfCovered = selfCovered(mn, ba);
            boolean[] checked = checkedBlocks(mn, ba);
            List<Integer> deferred = new ArrayList<>();
            for (int b = entryImplied ? 1 : 0; b < ba.blockCount(); b++) {
                int index = ba.blockStarts[b];
                AbstractInsnNode first = ba.insns[index];
                if (!loops.isEmpty()) {
                    // (LoopCycles leaves methods with self-covered code alone: nothing is deferred.)
                    AbstractInsnNode at = keepNewLabel(code, first, uninitLabels, mn);
                    if (!loopProbes(code, loops, b, at, slot, base, mark, counters, paths, classFirstId, outOfLine)) {
                        code.insertBefore(at, blockProbe(slot, base, b, checked[b]));
                    }
                    continue;
                }
                if (selfCovered[index]) {
                    // Inside a handler range that covers its own handler (javac's synchronized-block
                    // handler): a call there gives C1 an exception edge from the handler into
                    // itself, and it then refuses to compile the method at all. The block's event
                    // is recorded at the start of the block that follows it instead.
                    deferred.add(b);
                    continue;
                }
                AbstractInsnNode at = keepNewLabel(code, first, uninitLabels, mn);
                for (int late : deferred) {
                    code.insertBefore(at, blockProbe(slot, base, late, checked[late]));
                }
                deferred.clear();
                code.insertBefore(at, blockProbe(slot, base, b, checked[b]));
            }
        }

        if (stamps) {
            boolean[] selfCovered = selfCovered(mn, ba);
            for (int i = 0; i < ba.insns.length; i++) {
                AbstractInsnNode insn = ba.insns[i];
                if (insn instanceof MethodInsnNode && !selfCovered[i] && BlockingCalls.isBlocking((MethodInsnNode) insn)) {
                    String callee = ((MethodInsnNode) insn).owner;
                    if ((version & 0xFFFF) >= Opcodes.V1_5 && callee.charAt(0) != '[') {
                        // Resolve the callee's class before the first stamp (the same constant the
                        // call uses): a first call would otherwise load it between the stamps.
                        code.insertBefore(insn, new LdcInsnNode(Type.getObjectType(callee)));
                        code.insertBefore(insn, new InsnNode(Opcodes.POP));
                    }
                    code.insertBefore(insn, stamp(slot, "blockingEnter"));
                    code.insert(insn, stamp(slot, "blockingExit"));
                } else if (insn.getOpcode() == Opcodes.MONITORENTER && !selfCovered[i]) {
                    // A synchronized block: the clock is read around the monitorenter and
                    // stamped only when it waited (Tracer.monitorEntered), so an uncontended
                    // lock costs two clock reads and no record.
                    code.insertBefore(insn, stamp(slot, "monitorEnter"));
                    code.insert(insn, heldStamp(mn, insn, slot));
                }
            }
        }

        for (AbstractInsnNode insn : ba.insns) {
            int op = insn.getOpcode();
            if (op >= Opcodes.IRETURN && op <= Opcodes.RETURN) {
                code.insertBefore(insn, exitProbe(slot, base));
            }
        }

        // B is set before the handler's range begins: the handler's frame declares it an int.
        InsnList entry = startWord(classFirstId, methodId);
        entry.add(new VarInsnNode(Opcodes.ISTORE, base));
        entry.add(new InsnNode(Opcodes.ACONST_NULL));
        entry.add(new VarInsnNode(Opcodes.ASTORE, slot));
        for (int i = 0; i < loopLocals; i++) {
            entry.add(new InsnNode(Opcodes.ICONST_0));
            entry.add(new VarInsnNode(Opcodes.ISTORE, mark + i));
        }
        for (int i = 0; i < loops.size(); i++) {
            if (paths[i] >= 0) {
                // No call yet: the path of block 0 alone, which a record without calls never uses.
                entry.add(pushInt(firstPath(loops.get(i))));
                entry.add(new VarInsnNode(Opcodes.ISTORE, paths[i]));
            }
        }
        entry.add(start);
        entry.add(new VarInsnNode(Opcodes.ILOAD, base));
        if (blocks && entryImplied) {
            entry.add(pushInt(EventLayout.START_ENTRY_IMPLIED));
            entry.add(new InsnNode(Opcodes.IOR));
        }
        if (receiver && !isStatic && !isCtor) {
            entry.add(new VarInsnNode(Opcodes.ALOAD, 0));
            entry.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "enterInstance",
                    "(ILjava/lang/Object;)" + TRACE_DESC, false));
        } else {
            entry.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "enter", "(I)" + TRACE_DESC, false));
        }
        entry.add(new VarInsnNode(Opcodes.ASTORE, slot));
        AbstractInsnNode firstOriginal = code.getFirst();
        code.insert(entry);
        if (frames && firstIsTarget && !hasFrameBefore(firstOriginal)) {
            // The first instruction was a jump target at offset 0, whose frame may be implicit; it
            // is no longer at offset 0, so it needs an explicit one (newer javac writes one).
            code.insertBefore(firstReal(firstOriginal), initialFrame(mn, owner, slot, true, loopLocals));
        }

        if (exceptionExit) {
            code.add(end);
            if (!ranges.isEmpty()) {
                // The thrown exception goes to a second new local, so that it is rethrown even when
                // recording fails (a StackOverflowError leaves no stack for the call): the tracer
                // never replaces the program's exception.
                int thrown = base + 1 + loopLocals;
                LabelNode handler = new LabelNode();
                LabelNode callStart = new LabelNode();
                LabelNode callEnd = new LabelNode();
                LabelNode callFailed = new LabelNode();
                code.add(handler);
                exitHandler = handler;
                Object[] locals = new Object[base + 1 + loopLocals];
                java.util.Arrays.fill(locals, Opcodes.TOP);
                locals[slot] = TRACE;
                locals[base] = Opcodes.INTEGER;
                for (int i = 0; i < loopLocals; i++) {
                    locals[mark + i] = Opcodes.INTEGER;
                }
                if (frames) {
                    code.add(new FrameNode(Opcodes.F_NEW, locals.length, locals, 1, new Object[] {"java/lang/Throwable"}));
                }
                code.add(new VarInsnNode(Opcodes.ASTORE, thrown));       // []
                code.add(callStart);
                for (int i = 0; i < loops.size(); i++) {
                    // A loop left by an exception: its record goes before the exception's events.
                    LoopCycles.Loop loop = loops.get(i);
                    code.add(new VarInsnNode(Opcodes.ALOAD, slot));
                    code.add(new VarInsnNode(Opcodes.ILOAD, base));
                    code.add(new VarInsnNode(Opcodes.ILOAD, counters + i));
                    code.add(new VarInsnNode(Opcodes.ILOAD, mark));
                    code.add(loopShape(loop, classFirstId, paths[i]));
                    code.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "loopThrown",
                            "(" + TRACE_DESC + "IIIIIIII)V", false));
                }
                code.add(new VarInsnNode(Opcodes.ALOAD, thrown));        // [thrown]
                code.add(new VarInsnNode(Opcodes.ALOAD, slot));          // [thrown, trace]
                code.add(new VarInsnNode(Opcodes.ILOAD, base));          // [thrown, trace, start]
                code.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "exceptionExit",
                        "(Ljava/lang/Throwable;" + TRACE_DESC + "I)V", false)); // []
                code.add(callEnd);
                code.add(new VarInsnNode(Opcodes.ALOAD, thrown));        // [thrown]
                code.add(new InsnNode(Opcodes.ATHROW));
                code.add(callFailed);
                if (frames) {
                    Object[] withThrown = java.util.Arrays.copyOf(locals, thrown + 1);
                    withThrown[thrown] = "java/lang/Throwable";
                    code.add(new FrameNode(Opcodes.F_NEW, withThrown.length, withThrown, 1,
                            new Object[] {"java/lang/Throwable"}));
                }
                code.add(new InsnNode(Opcodes.POP));                     // []
                code.add(new VarInsnNode(Opcodes.ALOAD, thrown));        // [thrown]
                code.add(new InsnNode(Opcodes.ATHROW));
                for (LabelNode[] r : ranges) {
                    // Appended last: the program's own handlers are searched first.
                    mn.tryCatchBlocks.add(new TryCatchBlockNode(r[0], r[1], handler, null));
                }
                mn.tryCatchBlocks.add(new TryCatchBlockNode(callStart, callEnd, callFailed, null));
                if (outOfLine.size() > 0) {
                    LabelNode from = new LabelNode();
                    LabelNode to = new LabelNode();
                    code.add(from);
                    code.add(outOfLine);
                    code.add(to);
                    mn.tryCatchBlocks.add(new TryCatchBlockNode(from, to, handler, null));
                }
            }
        }
        mn.maxLocals = base + (exceptionExit ? 2 : 1) + loopLocals;
        mn.maxStack = Math.max(mn.maxStack + (loops.isEmpty() ? 3 : 8), loops.isEmpty() ? 4 : 10);
        // A static leaf called on a cycle: its body in place of the call (the record stands for its
        // events), its arguments in locals after all the others.
        int leafStack = 0;
        int leafLocals = 0;
        for (int i = 0; i < loops.size(); i++) {
            LoopCycles.Loop loop = loops.get(i);
            if (loop.call == null) {
                continue;
            }
            if (loop.leaf.multi) {
                List<Object> host = padded(withState(loop.callLocals, slot, loopLocals), mn.maxLocals);
                LeafInPlace.insert(mn, loop, host, exitHandler, frames,
                        new LeafInPlace.Slots(slot, base, mark, counters + i, paths[i], mn.maxLocals), classFirstId);
                leafStack = Math.max(leafStack, loop.leaf.maxStack + 12);
                leafLocals = Math.max(leafLocals, loop.leaf.maxLocals + 1);
                continue;
            }
            InsnList body = inlined(loop.call, loop.leaf, mn.maxLocals);
            if (loop.joined[loop.callBlock]) {
                // A step that began off the cycle reaches the call with no record pending: the
                // call's own events (Tracer.leafOffCycle).
                body.add(new VarInsnNode(Opcodes.ALOAD, slot));
                body.add(new VarInsnNode(Opcodes.ILOAD, counters + i));
                body.add(startWord(classFirstId, loop.leaf.id));
                body.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "leafOffCycle", "(" + TRACE_DESC + "II)V", false));
            }
            code.insertBefore(loop.call, body);
            code.remove(loop.call);
            leafStack = Math.max(leafStack, loop.leaf.maxStack + 4);
            leafLocals = Math.max(leafLocals, loop.leaf.maxLocals);
        }
        mn.maxStack += leafStack;
        mn.maxLocals += leafLocals;
        if (LoaderPrologue.applies(mn)) {
            LoaderPrologue.insert(mn, owner, frames);
        }
    }

    /** Pushes the method's start word: FIRST, the class's one event constant, plus K pages (see the class comment). */
    private static InsnList startWord(int classFirstId, int methodId) {
        InsnList p = new InsnList();
        p.add(new LdcInsnNode(EventLayout.methodStart(classFirstId)));
        int k = methodId - classFirstId;
        if (k > 0) {
            // K never becomes a pool constant: every int the instrumentation adds to the pool is
            // taken for an event word and relocated (CachedClass.locateConstants). Method ids have
            // 19 bits, so K fits sipush but in a class with over 32767 method pages.
            if (k <= Short.MAX_VALUE) {
                p.add(pushInt(k));
            } else {
                p.add(pushInt(k >>> 15));
                p.add(new org.objectweb.asm.tree.IntInsnNode(Opcodes.BIPUSH, 15));
                p.add(new InsnNode(Opcodes.ISHL));
                p.add(new org.objectweb.asm.tree.IntInsnNode(Opcodes.SIPUSH, k & Short.MAX_VALUE));
                p.add(new InsnNode(Opcodes.IOR));
            }
            p.add(new org.objectweb.asm.tree.IntInsnNode(Opcodes.BIPUSH, EventLayout.METHOD_SHIFT));
            p.add(new InsnNode(Opcodes.ISHL));
            p.add(new InsnNode(Opcodes.IADD));
        }
        return p;
    }

    /**
     * A method of {@link LeafMethods}: one probe at entry records its start, its receiver and its
     * end; no exit probe, no handler, no new local, so the method's frames stay as they were.
     * {@code entryImplied}: the start word carries START_ENTRY_IMPLIED (its one block's event is
     * implied), which the probe clears for the end word.
     */
    static void leaf(MethodNode mn, int classFirstId, int methodId, boolean receiver,
                     boolean entryImplied) {
        InsnList entry = startWord(classFirstId, methodId);
        if (entryImplied) {
            entry.add(pushInt(EventLayout.START_ENTRY_IMPLIED));
            entry.add(new InsnNode(Opcodes.IOR));
        }
        if (receiver && (mn.access & Opcodes.ACC_STATIC) == 0) {
            entry.add(new VarInsnNode(Opcodes.ALOAD, 0));
            entry.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "leaf", "(ILjava/lang/Object;)V", false));
        } else {
            entry.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "leaf", "(I)V", false));
        }
        // Inserted before the first instruction, which no jump targets (LeafMethods: jumps go
        // forward), so no frame describes the place it moves from.
        mn.instructions.insert(entry);
        mn.maxStack = Math.max(mn.maxStack, 3);
    }

    /** The agent's own entry point: guard the thread while it runs, record nothing. */
    static void hook(MethodNode mn, String owner, int version, BlockAnalysis ba) {
        boolean frames = (version & 0xFFFF) >= Opcodes.V1_6;
        InsnList code = mn.instructions;
        boolean firstIsTarget = ba.insns.length > 0 && isTarget(mn, ba, 0);
        for (AbstractInsnNode insn : ba.insns) {
            int op = insn.getOpcode();
            if (op >= Opcodes.IRETURN && op <= Opcodes.RETURN) {
                code.insertBefore(insn, new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "agentExit", "()V", false));
            }
        }
        AbstractInsnNode firstOriginal = code.getFirst();
        LabelNode start = new LabelNode();
        InsnList entry = new InsnList();
        entry.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "agentEnter", "()V", false));
        entry.add(start);
        code.insert(entry);
        if (frames && firstIsTarget && !hasFrameBefore(firstOriginal)) {
            code.insertBefore(firstReal(firstOriginal), initialFrame(mn, owner, -1, false));
        }
        LabelNode end = new LabelNode();
        LabelNode handler = new LabelNode();
        code.add(end);
        code.add(handler);
        if (frames) {
            code.add(new FrameNode(Opcodes.F_NEW, 0, new Object[0], 1, new Object[] {"java/lang/Throwable"}));
        }
        code.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "agentExit", "()V", false));
        code.add(new InsnNode(Opcodes.ATHROW));
        mn.tryCatchBlocks.add(new TryCatchBlockNode(start, end, handler, null));
        mn.maxStack = Math.max(mn.maxStack, 1);
    }

    /**
     * The stamp after a {@code monitorenter}, inside the range of the synchronized block's own
     * handler, which releases the monitor. javac begins that range just after the monitorenter;
     * a call placed between the two could throw (to the JVM, any call can) into the method's
     * exception-exit handler with the monitor still held. HotSpot's compilers refuse such a method
     * (C1: "invalid parsing", C2: "cannot parse method"), so it ran interpreted until C2 took it, or
     * for good: 78 refused compilations in jEdit's start-up, ConcurrentHashMap.putVal's among them,
     * and the start-up's main thread spent 0.4 s more than without these stamps. So each catch-any
     * range that begins at the block's first instruction gets a range of the stamp's own, to the
     * same handler (the stamp changes no local, so the handler's frame still holds), and a jump to
     * that first instruction still skips the stamp.
     */
    private static InsnList heldStamp(MethodNode mn, AbstractInsnNode monitorenter, int slot) {
        InsnList p = new InsnList();
        LabelNode held = new LabelNode();
        p.add(held);
        p.add(stamp(slot, "monitorEntered"));
        for (AbstractInsnNode n = monitorenter.getNext(); n != null && n.getOpcode() < 0; n = n.getNext()) {
            if (n instanceof LabelNode) {
                for (int i = 0; i < mn.tryCatchBlocks.size(); i++) {
                    TryCatchBlockNode tcb = mn.tryCatchBlocks.get(i);
                    if (tcb.start == n && tcb.type == null) {
                        // A range of its own, just before the block's in the table: the block's
                        // range stays as the original code has it, which is what static.xml
                        // describes (MethodElements skips ranges that start at a label of ours).
                        mn.tryCatchBlocks.add(i, new TryCatchBlockNode(held, (LabelNode) n, tcb.handler, null));
                        i++;
                    }
                }
            }
        }
        return p;
    }

    /** A clock stamp around a blocking call: {@code aload S; invokestatic method(ThreadTrace)V}. */
    private static InsnList stamp(int slot, String method) {
        InsnList p = new InsnList();
        p.add(new VarInsnNode(Opcodes.ALOAD, slot));
        p.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, method, "(" + TRACE_DESC + ")V", false));
        return p;
    }

    /**
     * The probes of block {@code b} that loop records change (LoopCycles): a loop's header counts a
     * step ({@code C = C < LOOP_HEAD_LIMIT ? C + 1 : loopFull(S, B, C, shape)} written out, or
     * {@code C = loopHead(S, B, C, shape)} where the header has no frame; then {@code M =
     * loopMark(S, C, M)}), its other blocks {@code iinc C 1}
     * (or, from a join on, {@code C = loopJoin(S, B, C, b)}: the count may be 0 there),
     * and a block a loop exits to first stores that loop's pending record ({@code loopExit(S, B, C,
     * shape); C = 0}). Returns true when the block gets no block probe of its own (it is on a cycle).
     */
    private static boolean loopProbes(InsnList code, List<LoopCycles.Loop> loops, int b, AbstractInsnNode at, int slot,
                                      int base, int mark, int counters, int[] paths, int classFirstId,
                                      InsnList outOfLine) {
        InsnList exits = new InsnList();
        for (int i = 0; i < loops.size(); i++) {
            LoopCycles.Loop loop = loops.get(i);
            for (int t : loop.exits) {
                if (t == b) {
                    exits.add(loopCall("loopExit", "V", slot, base, counters + i, loop, classFirstId, paths[i]));
                    exits.add(new InsnNode(Opcodes.ICONST_0));
                    exits.add(new VarInsnNode(Opcodes.ISTORE, counters + i));
                }
            }
        }
        for (int i = 0; i < loops.size(); i++) {
            LoopCycles.Loop loop = loops.get(i);
            if (!loop.inCycle[b]) {
                continue;
            }
            if (exits.size() > 0) {
                code.insertBefore(at, exits);
            }
            InsnList p = new InsnList();
            FrameNode frame = b == loop.header ? frameBefore(at) : null;
            if (frame != null) {
                // C = C < LOOP_HEAD_LIMIT ? C + 1 : loopFull(...), written out here rather than called
                // (Tracer.loopHead): the branch's profile is then this loop's own. Through the
                // shared loopHead, the compute kernel's hash loop, whose 5 M steps reach the limit,
                // made C2 compile the call to loopFull into every loop it inlined loopHead in, and
                // matmul's innermost loop took 0.3 s more (1.7 times) when hash ran in the same JVM.
                LabelNode full = new LabelNode();
                LabelNode counted = new LabelNode();
                // A signed compare of the count with a constant, as loopHead's: C2 then sees the
                // count as the loop's induction variable (with `C >>> 16 != 0` instead, matmul's
                // innermost loop took 0.55 s against 0.42 s run alone).
                p.add(new VarInsnNode(Opcodes.ILOAD, counters + i));
                p.add(new org.objectweb.asm.tree.IntInsnNode(Opcodes.SIPUSH, jbgui.runtime.Tracer.LOOP_HEAD_LIMIT));
                p.add(new org.objectweb.asm.tree.JumpInsnNode(Opcodes.IF_ICMPGE, full));
                p.add(new org.objectweb.asm.tree.IincInsnNode(counters + i, 1));
                p.add(counted);
                p.add(frame.clone(new IdentityHashMap<>()));
                outOfLine.add(full);
                outOfLine.add(frame.clone(new IdentityHashMap<>()));
                outOfLine.add(loopCall("loopFull", "I", slot, base, counters + i, loop, classFirstId, paths[i]));
                outOfLine.add(new VarInsnNode(Opcodes.ISTORE, counters + i));
                outOfLine.add(new org.objectweb.asm.tree.JumpInsnNode(Opcodes.GOTO, counted));
            }
            if (b == loop.header) {
                if (frame == null) {
                    p.add(loopCall("loopHead", "I", slot, base, counters + i, loop, classFirstId, paths[i]));
                    p.add(new VarInsnNode(Opcodes.ISTORE, counters + i));
                }
                p.add(new VarInsnNode(Opcodes.ALOAD, slot));
                p.add(new VarInsnNode(Opcodes.ILOAD, counters + i));
                p.add(new VarInsnNode(Opcodes.ILOAD, mark));
                p.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "loopMark", "(" + TRACE_DESC + "II)I", false));
                p.add(new VarInsnNode(Opcodes.ISTORE, mark));
            } else if (loop.joined[b]) {
                p.add(new VarInsnNode(Opcodes.ALOAD, slot));
                p.add(new VarInsnNode(Opcodes.ILOAD, base));
                p.add(new VarInsnNode(Opcodes.ILOAD, counters + i));
                p.add(pushInt(b));
                p.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "loopJoin", "(" + TRACE_DESC + "III)I", false));
                p.add(new VarInsnNode(Opcodes.ISTORE, counters + i));
            } else {
                p.add(new org.objectweb.asm.tree.IincInsnNode(counters + i, 1));
            }
            code.insertBefore(at, p);
            return true;
        }
        if (exits.size() > 0) {
            // Before the block's own probe, which the caller inserts before the same instruction.
            code.insertBefore(at, exits);
        }
        return false;
    }

    /** {@code aload S; iload B; iload C; shape; invokestatic name(S, B, C, shape)}, returning {@code ret}. */
    private static InsnList loopCall(String name, String ret, int slot, int base, int count, LoopCycles.Loop loop,
                                     int classFirstId, int path) {
        InsnList p = new InsnList();
        p.add(new VarInsnNode(Opcodes.ALOAD, slot));
        p.add(new VarInsnNode(Opcodes.ILOAD, base));
        p.add(new VarInsnNode(Opcodes.ILOAD, count));
        p.add(loopShape(loop, classFirstId, path));
        p.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, name, "(" + TRACE_DESC + "IIIIIII)" + ret, false));
        return p;
    }

    /**
     * A loop's constants for the runtime: the header's block index, back, the cycle's mask (no pool
     * constant), and its static leaf's block offset k and start word (0, 0 without one).
     */
    static InsnList loopShape(LoopCycles.Loop loop, int classFirstId, int path) {
        InsnList p = new InsnList();
        p.add(pushInt(loop.header));
        p.add(pushInt(loop.back()));
        int mask = loop.mask;
        if (mask <= Short.MAX_VALUE) {
            p.add(pushInt(mask));
        } else {
            // Every int the instrumentation adds to the pool is taken for an event word and
            // relocated (CachedClass.locateConstants): build it from two halves.
            p.add(pushInt(mask >>> 13));
            p.add(new org.objectweb.asm.tree.IntInsnNode(Opcodes.BIPUSH, 13));
            p.add(new InsnNode(Opcodes.ISHL));
            p.add(pushInt(mask & 0x1FFF));
            p.add(new InsnNode(Opcodes.IOR));
        }
        if (loop.call == null) {
            p.add(new InsnNode(Opcodes.ICONST_0));
            p.add(new InsnNode(Opcodes.ICONST_0));
        } else {
            p.add(path >= 0 ? new VarInsnNode(Opcodes.ILOAD, path) : pushInt(loop.callBlock - loop.lo));
            p.add(startWord(classFirstId, loop.leaf.id));
        }
        return p;
    }

    /** A loop's call with the path of its leaf's block 0 alone (LeafInPlace: each later block adds its bit). */
    static int firstPath(LoopCycles.Loop loop) {
        return (loop.callBlock - loop.lo) | (1 << EventLayout.LOOP_CALL_PATH_SHIFT);
    }

    /** The frame that describes the place {@code at} (a block's first instruction), or null. */
    private static FrameNode frameBefore(AbstractInsnNode at) {
        for (AbstractInsnNode n = at.getPrevious(); n != null && n.getOpcode() < 0; n = n.getPrevious()) {
            if (n instanceof FrameNode) {
                return (FrameNode) n;
            }
        }
        return null;
    }

    /** Frame locals padded with TOP to {@code slots} slots. */
    private static List<Object> padded(List<Object> local, int slots) {
        List<Object> out = new ArrayList<>(local);
        int used = 0;
        for (Object o : local) {
            used += (o == Opcodes.LONG || o == Opcodes.DOUBLE) ? 2 : 1;
        }
        while (used < slots) {
            out.add(Opcodes.TOP);
            used++;
        }
        return out;
    }

    /**
     * A static leaf's body in place of a call to it: the arguments popped into locals from
     * {@code first} on, the body's instructions reading those locals, its return left out (the
     * value stays on the stack). The body is one block (LeafMethods at block level): no jump,
     * nothing that throws, so it needs no frame and no handler.
     */
    private static InsnList inlined(MethodInsnNode call, LoopCycles.Leaf leaf, int first) {
        InsnList p = new InsnList();
        Type[] args = Type.getArgumentTypes(call.desc);
        int[] slots = new int[args.length];
        int next = 0;
        for (int i = 0; i < args.length; i++) {
            slots[i] = next;
            next += args[i].getSize();
        }
        for (int i = args.length - 1; i >= 0; i--) {
            p.add(new VarInsnNode(args[i].getOpcode(Opcodes.ISTORE), first + slots[i]));
        }
        Map<LabelNode, LabelNode> labels = new IdentityHashMap<>();
        for (AbstractInsnNode insn : leaf.body) {
            int op = insn.getOpcode();
            if (op >= Opcodes.IRETURN && op <= Opcodes.RETURN) {
                continue;
            }
            AbstractInsnNode copy = insn.clone(labels);
            if (copy instanceof VarInsnNode) {
                ((VarInsnNode) copy).var += first;
            } else if (copy instanceof org.objectweb.asm.tree.IincInsnNode) {
                ((org.objectweb.asm.tree.IincInsnNode) copy).var += first;
            }
            p.add(copy);
        }
        return p;
    }

    /** {@code aload S; iload B; push INDEX; invokestatic block(ThreadTrace, int, int)} (or blockChecked) */
    private static InsnList blockProbe(int slot, int base, int index, boolean checked) {
        InsnList p = new InsnList();
        p.add(new VarInsnNode(Opcodes.ALOAD, slot));             // [.., trace]
        p.add(new VarInsnNode(Opcodes.ILOAD, base));             // [.., trace, start]
        p.add(pushInt(index));                        // [.., trace, start, index]
        p.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, checked ? "blockChecked" : "block",
                "(" + TRACE_DESC + "II)V", false)); // [..]
        return p;
    }

    /**
     * The blocks whose probe tests for a full buffer (Tracer.blockChecked); the others only store
     * their event (Tracer.block). The entry, exit and exception-exit probes always test, so between
     * two tests a thread runs blocks of one frame only, and along a path without a cycle: every
     * cycle of the control flow passes a jump to an earlier or the same instruction, or an
     * exception edge into a handler, and the blocks those lead to test. Such a path visits each
     * block once at most, so a method of at most EventLayout.UNCHECKED_RUN_MAX blocks writes no
     * more than that many events between tests, which the buffer's slack holds
     * (EventLayout.BUFFER_SLACK_EVENTS). A longer method tests in every block, and so does code with
     * jsr/ret, whose returns are jumps the analysis does not follow.
     */
    static boolean[] checkedBlocks(MethodNode mn, BlockAnalysis ba) {
        int n = ba.blockCount();
        boolean[] checked = new boolean[n];
        boolean all = n > EventLayout.UNCHECKED_RUN_MAX;
        for (int i = 0; i < ba.insns.length && !all; i++) {
            AbstractInsnNode insn = ba.insns[i];
            int op = insn.getOpcode();
            if (op == Opcodes.JSR || op == Opcodes.RET) {
                all = true;
            }
            for (LabelNode target : BlockAnalysis.branchTargets(insn)) {
                int t = ba.labelIndex.get(target);
                if (t <= i && t < ba.insns.length) {
                    checked[ba.blockOf[t]] = true;
                }
            }
        }
        if (all) {
            java.util.Arrays.fill(checked, true);
            return checked;
        }
        for (TryCatchBlockNode tc : mn.tryCatchBlocks) {
            Integer h = ba.labelIndex.get(tc.handler);
            if (h != null && h < ba.insns.length) {
                checked[ba.blockOf[h]] = true;
            }
        }
        return checked;
    }

    /** {@code aload S; iload B; invokestatic exit(ThreadTrace, int)} */
    private static InsnList exitProbe(int slot, int base) {
        InsnList p = new InsnList();
        p.add(new VarInsnNode(Opcodes.ALOAD, slot));             // [.., trace]
        p.add(new VarInsnNode(Opcodes.ILOAD, base));             // [.., trace, start]
        p.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "exit", "(" + TRACE_DESC + "I)V", false)); // [..]
        return p;
    }

    private static AbstractInsnNode firstReal(AbstractInsnNode n) {
        while (n != null && n.getOpcode() < 0) {
            n = n.getNext();
        }
        return n;
    }

    /** Instructions inside a try range that covers its own handler. */
    static boolean[] selfCovered(MethodNode mn, BlockAnalysis ba) {
        boolean[] covered = new boolean[ba.insns.length];
        for (TryCatchBlockNode tc : mn.tryCatchBlocks) {
            int start = ba.labelIndex.get(tc.start);
            int end = ba.labelIndex.get(tc.end);
            int handler = ba.labelIndex.get(tc.handler);
            if (start <= handler && handler < end) {
                for (int i = start; i < end; i++) {
                    covered[i] = true;
                }
            }
        }
        return covered;
    }

    /** Whether a frame already stands between {@code n} and the next real instruction. */
    private static boolean hasFrameBefore(AbstractInsnNode n) {
        for (; n != null && n.getOpcode() < 0; n = n.getNext()) {
            if (n instanceof FrameNode) {
                return true;
            }
        }
        return false;
    }

    /** Whether instruction {@code index} is a jump, switch or handler target. */
    private static boolean isTarget(MethodNode mn, BlockAnalysis ba, int index) {
        for (AbstractInsnNode insn : ba.insns) {
            for (LabelNode l : BlockAnalysis.branchTargets(insn)) {
                if (ba.labelIndex.get(l) == index) {
                    return true;
                }
            }
        }
        for (TryCatchBlockNode tc : mn.tryCatchBlocks) {
            if (ba.labelIndex.get(tc.handler) == index) {
                return true;
            }
        }
        return false;
    }

    static AbstractInsnNode pushInt(int value) {
        if (value <= 5) {
            return new InsnNode(Opcodes.ICONST_0 + value);
        }
        if (value <= Byte.MAX_VALUE) {
            return new org.objectweb.asm.tree.IntInsnNode(Opcodes.BIPUSH, value);
        }
        if (value <= Short.MAX_VALUE) {
            return new org.objectweb.asm.tree.IntInsnNode(Opcodes.SIPUSH, value);
        }
        return new LdcInsnNode(value);
    }

    /** Frame locals with the state slots (S, then B) appended (TOP-padded: long and double take two slots). */
    private static List<Object> withState(List<Object> local, int slot) {
        return withState(local, slot, 0);
    }

    /** With {@code ints} int locals after B too: the loop records' mark and counters. */
    private static List<Object> withState(List<Object> local, int slot, int ints) {
        List<Object> out = padded(local == null ? List.of() : local, slot);
        out.add(TRACE);
        out.add(Opcodes.INTEGER);
        for (int i = 0; i < ints; i++) {
            out.add(Opcodes.INTEGER);
        }
        return out;
    }

    /** A value's type as a stack map frame names it. */
    static Object frameType(Type t) {
        switch (t.getSort()) {
            case Type.BOOLEAN: case Type.CHAR: case Type.BYTE: case Type.SHORT: case Type.INT:
                return Opcodes.INTEGER;
            case Type.FLOAT: return Opcodes.FLOAT;
            case Type.LONG: return Opcodes.LONG;
            case Type.DOUBLE: return Opcodes.DOUBLE;
            case Type.ARRAY: return t.getDescriptor();
            default: return t.getInternalName();
        }
    }

    /** The frame at method entry, from the descriptor, with the state slot when {@code slot >= 0}. */
    private static FrameNode initialFrame(MethodNode mn, String owner, int slot, boolean withState) {
        return initialFrame(mn, owner, slot, withState, 0);
    }

    private static FrameNode initialFrame(MethodNode mn, String owner, int slot, boolean withState, int ints) {
        List<Object> locals = new ArrayList<>();
        if ((mn.access & Opcodes.ACC_STATIC) == 0) {
            locals.add("<init>".equals(mn.name) ? Opcodes.UNINITIALIZED_THIS : owner);
        }
        for (Type t : Type.getArgumentTypes(mn.desc)) {
            locals.add(frameType(t));
        }
        List<Object> all = withState ? withState(locals, slot, ints) : locals;
        return new FrameNode(Opcodes.F_NEW, all.size(), all.toArray(), 0, new Object[0]);
    }

    /** Labels that frames use to name a {@code new} instruction's uninitialized value. */
    private static Map<LabelNode, LabelNode> uninitializedLabels(MethodNode mn) {
        Map<LabelNode, LabelNode> labels = new IdentityHashMap<>();
        for (AbstractInsnNode n = mn.instructions.getFirst(); n != null; n = n.getNext()) {
            if (n instanceof FrameNode) {
                FrameNode f = (FrameNode) n;
                for (List<Object> list : List.of(f.local == null ? List.of() : f.local, f.stack == null ? List.of() : f.stack)) {
                    for (Object o : list) {
                        if (o instanceof LabelNode) {
                            labels.put((LabelNode) o, (LabelNode) o);
                        }
                    }
                }
            }
        }
        return labels;
    }

    /**
     * Where a block probe goes: before the block's first instruction, except when that
     * instruction is a {@code new} named by a frame through a label just before it. Then a fresh
     * label goes between the probe and the {@code new}, and the frames are pointed at it.
     */
    private static AbstractInsnNode keepNewLabel(InsnList code, AbstractInsnNode first, Map<LabelNode, LabelNode> uninit,
                                                 MethodNode mn) {
        if (first.getOpcode() != Opcodes.NEW || uninit.isEmpty() || !(first instanceof TypeInsnNode)) {
            return first;
        }
        List<LabelNode> before = new ArrayList<>();
        for (AbstractInsnNode p = first.getPrevious(); p != null && p.getOpcode() < 0; p = p.getPrevious()) {
            if (p instanceof LabelNode && uninit.containsKey(p)) {
                before.add((LabelNode) p);
            }
        }
        if (before.isEmpty()) {
            return first;
        }
        LabelNode fresh = new LabelNode();
        code.insertBefore(first, fresh);
        for (AbstractInsnNode n = code.getFirst(); n != null; n = n.getNext()) {
            if (n instanceof FrameNode) {
                FrameNode f = (FrameNode) n;
                replace(f.local, before, fresh);
                replace(f.stack, before, fresh);
            }
        }
        return fresh;
    }

    private static void replace(List<Object> list, List<LabelNode> old, LabelNode fresh) {
        if (list == null) {
            return;
        }
        for (int i = 0; i < list.size(); i++) {
            if (old.contains(list.get(i))) {
                list.set(i, fresh);
            }
        }
    }
}
