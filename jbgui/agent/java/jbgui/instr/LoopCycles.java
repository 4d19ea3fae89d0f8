package jbgui.instr;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.objectweb.asm.Handle;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.ConstantDynamic;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TryCatchBlockNode;

import jbgui.runtime.EventLayout;

/**
 * Tight loops whose blocks the probes count instead of recording one event per step (agent option
 * {@code loops}; docs/loop-events.md). Such a loop's blocks increment a local; when the loop is
 * left, one loop record (three words, EventLayout.EXT_LOOP) stands for all their events, and
 * readers write those events back (jbgui/model/format/entry_blocks.py): they see the words a probe
 * per block would have stored. A tight loop stored a word per step, and C2 kept that store (and the
 * buffer's position) in the loop, so such loops stopped vectorising: 29% of the compute kernel's
 * events and 16% of jEdit's start-up are steps of loops like these.
 *
 * <p>A loop qualifies when:
 * <ul>
 * <li>it is a natural loop with a cycle: one path from its header back to it through blocks that
 *     store nothing (below), the only such path. So the order of the cycle's blocks is known, and
 *     the record need only say how many steps ran (and a step may stop mid-cycle, at an exit or
 *     an exception). Its other blocks, off the cycle, are recorded as usual: a rare branch that
 *     calls or allocates, or an inner loop (whose header is never on the cycle; it may get records
 *     of its own). A loop with two such paths round (an {@code if} whose both arms store nothing)
 *     does not qualify: which path is the usual one is not known;</li>
 * <li>only the header is entered from outside the body, so counting starts at the header;</li>
 * <li>the cycle visits its blocks in ascending order once rotated to its lowest block, and spans at
 *     most {@link EventLayout#LOOP_SPAN_MAX} blocks: the record then gives the cycle as a mask;</li>
 * <li>nothing on the cycle can put an event on the thread between two of its steps: no invoke, no
 *     allocation of an object or object array, no static field (class initialisation), no class
 *     constant, cast or {@code instanceof} (class loading), no monitor, no {@code athrow}, fields
 *     only of the method's own class (already loaded). An implicit exception (an array index, a
 *     division, a null) runs its constructor, which is traced: the exception-exit handler then puts
 *     the record before that constructor's events (Tracer.loopThrown);</li>
 * <li>no handler of the program covers the cycle or starts on it, and the exception-exit handler
 *     covers all of it, so the only way out of a step by exception is that handler, which stores
 *     the record (off the cycle no record is pending, so handlers there are the program's
 *     business);</li>
 * <li>the method has no code in a range covering its own handler (deferred block events,
 *     ProbeInserter) and no jsr/ret.</li>
 * </ul>
 * Blocks reached by leaving the cycle (exit targets, inside the loop's body or after it) store the
 * pending record before their own event. A step that began off the cycle rejoins it with no
 * record pending: from the first cycle block such a step can reach (a join) round to the header,
 * the blocks test the count (Tracer.loopJoin) and are recorded as blocks when it is 0, and the
 * next record starts at the header.
 */
final class LoopCycles {
    private LoopCycles() {}

    /** At most this many loops per method get a counter (a local each). */
    static final int MAX_LOOPS = 64;

    /**
     * A static method of the class whose calls inside a cycle are written out in place (its body,
     * with its arguments in new locals), so that the loop record stands for its events too. Either
     * one that the leaf probe records (LeafMethods, with its one block implied by its start): the
     * record stands for its start, block and end; or a pure method of several blocks
     * ({@link #multi}, PureLeaves): the record stands for its start, the blocks of its path and its
     * end, and the body in place tells which path each call took (ProbeInserter).
     */
    static final class Leaf {
        final int id;
        /** Its instructions before any probe; with {@link #multi}, its labels and frames too. */
        final AbstractInsnNode[] body;
        final int maxLocals;
        final int maxStack;
        /** A pure leaf of several blocks (PureLeaves); the fields below are for those only. */
        boolean multi;
        /** Per node of {@link #body}: the block it begins (its first real instruction), else -1. */
        int[] blockAt;
        /** Whether an instruction of it can throw (an array index, a division, a null). */
        boolean canThrow;
        String owner;
        String name;
        String desc;

        Leaf(int id, AbstractInsnNode[] body, int maxLocals, int maxStack) {
            this.id = id;
            this.body = body;
            this.maxLocals = maxLocals;
            this.maxStack = maxStack;
        }
    }

    /** One qualifying loop. */
    static final class Loop {
        /** The header's block index: counting starts there. */
        final int header;
        /** The cycle's lowest block index. */
        final int lo;
        /** Bit k: block lo + k is on the cycle. */
        final int mask;
        /** The cycle's blocks. */
        final boolean[] inCycle;
        /** Cycle blocks a step may reach with no record pending (after a join from off the cycle). */
        final boolean[] joined;
        /** Blocks outside the cycle that an edge from it reaches. */
        final int[] exits;
        /** The one call of a static leaf on the cycle, its block and its leaf; null, -1, null without. */
        final org.objectweb.asm.tree.MethodInsnNode call;
        final int callBlock;
        final Leaf leaf;
        /** With a leaf: the steps from the header to the call's block, both counted. */
        int callSteps;
        /** With a {@link Leaf#multi} leaf: the locals at the call, as a frame lists them (CallSiteFrame). */
        List<Object> callLocals;

        Loop(int header, int lo, int mask, boolean[] inCycle, boolean[] joined, int[] exits, org.objectweb.asm.tree.MethodInsnNode call,
             int callBlock, Leaf leaf) {
            this.header = header;
            this.lo = lo;
            this.mask = mask;
            this.inCycle = inCycle;
            this.joined = joined;
            this.exits = exits;
            this.call = call;
            this.callBlock = callBlock;
            this.leaf = leaf;
        }

        /** How far the header is above the cycle's lowest block (the record's {@code back}). */
        int back() {
            return header - lo;
        }
    }

    /**
     * The qualifying loops of a method, disjoint.
     *
     * @param covered per instruction: whether the exception-exit handler covers it
     */
    static List<Loop> find(MethodNode mn, String owner, BlockAnalysis ba, boolean[] covered, Map<String, Leaf> leaves) {
        List<Loop> loops = new ArrayList<>();
        int n = ba.blockCount();
        if (n < 1 || n > Short.MAX_VALUE) {
            return loops;
        }
        for (AbstractInsnNode insn : ba.insns) {
            if (insn.getOpcode() == Opcodes.JSR || insn.getOpcode() == Opcodes.RET) {
                return loops;
            }
        }
        for (boolean self : ProbeInserter.selfCovered(mn, ba)) {
            if (self) {
                return loops;
            }
        }
        int[][] succ = successors(ba);
        boolean[] handled = new boolean[n];   // a program's handler starts there or covers it
        for (TryCatchBlockNode tc : mn.tryCatchBlocks) {
            int from = ba.labelIndex.get(tc.start);
            int to = ba.labelIndex.get(tc.end);
            for (int i = from; i < to && i < ba.insns.length; i++) {
                handled[ba.blockOf[i]] = true;
            }
            int h = ba.labelIndex.get(tc.handler);
            if (h < ba.insns.length) {
                handled[ba.blockOf[h]] = true;
            }
        }
        int[][] pred = predecessors(succ);
        // Per block, once for all the loops: whether it can be on a cycle (quiet, `quietBlock`),
        // and the static leaf it calls if any; whether a backward edge reaches it (a loop's header).
        Leaf[] leafOf = new Leaf[n];
        MethodInsnNode[] leafCall = new MethodInsnNode[n];
        boolean[] quiet = new boolean[n];
        boolean[] backTarget = new boolean[n];
        for (int k = 0; k < n; k++) {
            quiet[k] = quietBlock(owner, ba, covered, leaves, k, leafCall, leafOf);
            for (int t : succ[k]) {
                backTarget[t] |= t <= k;
            }
        }
        boolean[] used = new boolean[n];
        for (int head = 0; head < n && loops.size() < MAX_LOOPS; head++) {
            if (!backTarget[head]) {
                continue;     // no loop's header
            }
            Loop loop = loopAt(succ, pred, handled, used, quiet, backTarget, leafCall, leafOf, head);
            if (loop != null && loop.leaf != null && loop.leaf.multi) {
                loop.callLocals = CallSiteFrame.locals(mn, owner, loop.call);
                if (loop.callLocals == null) {
                    loop = null;
                }
            }
            if (loop != null) {
                loops.add(loop);
                for (int b = 0; b < n; b++) {
                    used[b] |= loop.inCycle[b];
                }
            }
        }
        return loops;
    }

    private static Loop loopAt(int[][] succ, int[][] pred, boolean[] handled, boolean[] used, boolean[] quiet,
                               boolean[] backTarget, MethodInsnNode[] leafCall, Leaf[] leafOf, int head) {
        int n = succ.length;
        // The back edges' sources: blocks at or after the header that jump to it.
        boolean[] body = new boolean[n];
        List<Integer> todo = new ArrayList<>();
        for (int s = head; s < n; s++) {
            for (int t : succ[s]) {
                if (t == head && !body[s]) {
                    body[s] = true;
                    todo.add(s);
                }
            }
        }
        if (todo.isEmpty()) {
            return null;
        }
        // The natural loop: everything that reaches a back edge's source without passing the header.
        body[head] = true;
        while (!todo.isEmpty()) {
            int b = todo.remove(todo.size() - 1);
            if (b == head) {
                continue;
            }
            for (int p : pred[b]) {
                if (!body[p]) {
                    body[p] = true;
                    todo.add(p);
                }
            }
        }
        // The cycle: the one path from the header back to it through blocks that store nothing
        // (`quiet`, but for one call of a static leaf), that no program handler covers or starts
        // at, that another loop's cycle does not hold and that are not the header of a loop
        // nested in this one. Body blocks off it (a rare branch that calls, allocates, throws or
        // runs an inner loop) are recorded as usual: the pending record is stored where the cycle
        // is left for them, and counting starts again at the header.
        boolean[] onPath = new boolean[n];
        for (int k = 0; k < n; k++) {
            // A header of a loop nested in this one (after the header, reached by a backward edge)
            // is never on the cycle.
            onPath[k] = body[k] && quiet[k] && !used[k] && !handled[k] && (k <= head || !backTarget[k]);
        }
        if (!onPath[head]) {
            return null;
        }
        // Which of them reach the header through such blocks.
        boolean[] reaches = new boolean[n];
        List<Integer> back = new ArrayList<>();
        back.add(head);
        while (!back.isEmpty()) {
            int t = back.remove(back.size() - 1);
            for (int p : pred[t]) {
                if (p != head && onPath[p] && !reaches[p]) {
                    reaches[p] = true;
                    back.add(p);
                }
            }
        }
        boolean[] inCycle = new boolean[n];
        int[] next = new int[n];
        int size = 0;
        int descents = 0;
        int b = head;
        do {
            int only = -1;
            for (int t : succ[b]) {
                if (onPath[t] && (t == head || reaches[t]) && t != only) {
                    if (only >= 0) {
                        return null;      // two ways round: which one is usual is not known
                    }
                    only = t;
                }
            }
            if (only < 0 || inCycle[b]) {
                return null;
            }
            inCycle[b] = true;
            next[b] = only;
            size++;
            if (only <= b) {
                descents++;
            }
            b = only;
        } while (b != head);
        int lo = n;
        int hi = -1;
        MethodInsnNode call = null;
        int callBlock = -1;
        Leaf leaf = null;
        for (int k = 0; k < n; k++) {
            if (inCycle[k]) {
                lo = Math.min(lo, k);
                hi = Math.max(hi, k);
                if (leafCall[k] != null) {
                    if (call != null) {
                        return null;
                    }
                    call = leafCall[k];
                    callBlock = k;
                    leaf = leafOf[k];
                }
            }
        }
        if (descents != 1 || hi - lo >= EventLayout.LOOP_SPAN_MAX || head > Short.MAX_VALUE) {
            return null;
        }
        // Entered only at the header.
        for (int p = 0; p < n; p++) {
            if (body[p]) {
                continue;
            }
            for (int t : succ[p]) {
                if (body[t] && t != head) {
                    return null;
                }
            }
        }
        // Joins: cycle blocks that a block off the cycle reaches; from the first of them round to
        // the header the count may be 0 (a step that began off the cycle), and such a step's
        // blocks are recorded as blocks (Tracer.loopJoin).
        boolean[] joined = new boolean[n];
        boolean joining = false;
        b = next[head];
        while (b != head) {
            for (int p : pred[b]) {
                joining |= !inCycle[p];
            }
            joined[b] = joining;
            b = next[b];
        }
        int callSteps = 0;
        if (leaf != null) {
            callSteps = 1;
            for (b = head; b != callBlock; b = next[b]) {
                callSteps++;
            }
            if (leaf.multi && joined[callBlock]) {
                // A step may reach the call with no record pending, and the body in place would
                // need a mark of its own for an exception: not worth it for a rare shape.
                return null;
            }
            if (leaf.multi) {
                // After a call on another path than the record's (Tracer.leafOffPath) or an
                // exception in the body in place (Tracer.leafThrew), no record is pending for the
                // rest of the step.
                for (b = next[callBlock]; b != head; b = next[b]) {
                    joined[b] = true;
                }
            }
        }
        List<Integer> exits = new ArrayList<>();
        int mask = 0;
        for (int k = lo; k <= hi; k++) {
            if (!inCycle[k]) {
                continue;
            }
            mask |= 1 << (k - lo);
            for (int t : succ[k]) {
                if (!inCycle[t] && !exits.contains(t)) {
                    exits.add(t);
                }
            }
        }
        int[] exitArray = new int[exits.size()];
        for (int i = 0; i < exitArray.length; i++) {
            exitArray[i] = exits.get(i);
        }
        Loop loop = new Loop(head, lo, mask, inCycle, joined, exitArray, call, callBlock, leaf);
        loop.callSteps = callSteps;
        return loop;
    }

    /**
     * Whether block {@code k} can be on a cycle: the exception-exit handler covers it and nothing
     * in it can store an event but one call of a static leaf (then in {@code leafCall[k]},
     * {@code leafOf[k]}), before which nothing in the block can throw (its step always reaches
     * the call).
     */
    private static boolean quietBlock(String owner, BlockAnalysis ba, boolean[] covered, Map<String, Leaf> leaves, int k,
                                      MethodInsnNode[] leafCall, Leaf[] leafOf) {
        boolean mayHaveThrown = false;
        for (int i = ba.blockStarts[k]; i < ba.blockEnd(k); i++) {
            AbstractInsnNode insn = ba.insns[i];
            if (!covered[i]) {
                return false;
            }
            if (!quiet(insn, owner)) {
                Leaf l = leafCalled(insn, owner, leaves);
                if (l == null || leafCall[k] != null || mayHaveThrown) {
                    leafCall[k] = null;
                    leafOf[k] = null;
                    return false;
                }
                leafCall[k] = (MethodInsnNode) insn;
                leafOf[k] = l;
            }
            mayHaveThrown |= BlockAnalysis.mayThrow(insn.getOpcode());
        }
        return true;
    }

    /** The static leaf of this class that {@code insn} calls, or null. */
    private static Leaf leafCalled(AbstractInsnNode insn, String owner, Map<String, Leaf> leaves) {
        if (leaves == null || insn.getOpcode() != Opcodes.INVOKESTATIC) {
            return null;
        }
        MethodInsnNode m = (MethodInsnNode) insn;
        return m.owner.equals(owner) && !m.itf ? leaves.get(m.name + m.desc) : null;
    }

    /** Whether an instruction runs without putting an event on the thread (see the class comment). */
    static boolean quiet(AbstractInsnNode insn, String owner) {
        int op = insn.getOpcode();
        switch (op) {
            case Opcodes.INVOKEVIRTUAL: case Opcodes.INVOKESPECIAL: case Opcodes.INVOKESTATIC:
            case Opcodes.INVOKEINTERFACE: case Opcodes.INVOKEDYNAMIC:
            case Opcodes.NEW: case Opcodes.ANEWARRAY: case Opcodes.MULTIANEWARRAY:
            case Opcodes.GETSTATIC: case Opcodes.PUTSTATIC:
            case Opcodes.CHECKCAST: case Opcodes.INSTANCEOF:
            case Opcodes.MONITORENTER: case Opcodes.MONITOREXIT:
            case Opcodes.ATHROW: case Opcodes.JSR: case Opcodes.RET:
                return false;
            case Opcodes.GETFIELD: case Opcodes.PUTFIELD:
                return ((FieldInsnNode) insn).owner.equals(owner);
            case Opcodes.LDC: {
                Object c = ((LdcInsnNode) insn).cst;
                return !(c instanceof Type || c instanceof Handle || c instanceof ConstantDynamic);
            }
            default:
                return true;
        }
    }

    /** Each block's successors by normal control flow (jumps, switches, falling through). */
    static int[][] successors(BlockAnalysis ba) {
        int n = ba.blockCount();
        int[][] succ = new int[n][];
        for (int b = 0; b < n; b++) {
            List<Integer> out = new ArrayList<>();
            AbstractInsnNode last = ba.insns[ba.blockEnd(b) - 1];
            for (LabelNode l : BlockAnalysis.branchTargets(last)) {
                int t = ba.labelIndex.get(l);
                if (t < ba.insns.length && !out.contains(ba.blockOf[t])) {
                    out.add(ba.blockOf[t]);
                }
            }
            int op = last.getOpcode();
            boolean falls = !BlockAnalysis.endsFlow(op) && op != Opcodes.GOTO
                    && op != Opcodes.TABLESWITCH && op != Opcodes.LOOKUPSWITCH;
            if (falls && b + 1 < n && !out.contains(b + 1)) {
                out.add(b + 1);
            }
            succ[b] = new int[out.size()];
            for (int i = 0; i < succ[b].length; i++) {
                succ[b][i] = out.get(i);
            }
        }
        return succ;
    }

    private static int[][] predecessors(int[][] succ) {
        int n = succ.length;
        int[] count = new int[n];
        for (int[] s : succ) {
            for (int t : s) {
                count[t]++;
            }
        }
        int[][] pred = new int[n][];
        for (int b = 0; b < n; b++) {
            pred[b] = new int[count[b]];
            count[b] = 0;
        }
        for (int b = 0; b < n; b++) {
            for (int t : succ[b]) {
                pred[t][count[t]++] = b;
            }
        }
        return pred;
    }
}
