package jbgui.instr;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.FrameNode;
import org.objectweb.asm.tree.IincInsnNode;
import org.objectweb.asm.tree.InsnList;
import org.objectweb.asm.tree.InsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TryCatchBlockNode;
import org.objectweb.asm.tree.VarInsnNode;

import jbgui.runtime.EventLayout;

/**
 * A pure leaf of several blocks (PureLeaves) written in place of its call on a loop's cycle, so
 * that the loop's record stands for the call's events (docs/loop-events.md). Laid out as:
 * <pre>
 *   xstore args                       the arguments into locals first+1..., never written again
 *   R = firstPath                     the call's k and the path of block 0
 *   [Ls] the leaf's body               each block j >= 1 first does iinc R (1 << (SHIFT + j));
 *                                      a return jumps to Le with its value on the stack
 *   [Le] if (R != P) {                 another path than the pending record's calls took:
 *          if (C == q) P = R                 the record's first call (it began at this step's
 *                                            header): its path is the record's
 *          else C = leafOffPath(S, B, C, q, R, shape)   the record's steps before this one
 *                                            stored, then this step's blocks and call as words;
 *        }                                   the step goes on with no record pending
 *   [Lj] ...                           the cycle goes on, the leaf's value on the stack
 *   ...
 *   [Lh] catch-all around [Ls, Le):    an implicit exception in the body
 *        C = leafThrew(S, B, C, M, q, shape)   its constructor's events taken back, the record
 *                                              and this step's q blocks stored
 *        the real call, from the argument locals (it throws the same exception, recorded)
 *        goto Lj
 * </pre>
 * The fast path, the same path as the record's calls, costs an {@code iinc} per block and one
 * compare. The frames at Le, Lj and Lh, and the leaf's own frames shifted, take the caller's
 * locals at the call (CallSiteFrame); the call's operand stack held only its arguments.
 */
final class LeafInPlace {
    private LeafInPlace() {}

    /** The locals the code uses: S, B, M, the loop's C and P, and the first free one (R, then the leaf's). */
    static final class Slots {
        final int trace;
        final int base;
        final int mark;
        final int count;
        final int path;
        final int first;

        Slots(int trace, int base, int mark, int count, int path, int first) {
            this.trace = trace;
            this.base = base;
            this.mark = mark;
            this.count = count;
            this.path = path;
            this.first = first;
        }
    }

    private static final String TRACER = ProbeInserter.TRACER;
    private static final String TRACE_DESC = "L" + ProbeInserter.TRACE + ";";

    /**
     * Replaces {@code loop.call} by the leaf's body. {@code host}: the caller's frame locals at
     * the call, padded to {@code slots.first}; {@code exitHandler}: the exception-exit handler,
     * which must cover the real call.
     */
    static void insert(MethodNode mn, LoopCycles.Loop loop, List<Object> host, LabelNode exitHandler, boolean frames,
                       Slots slots, int classFirstId) {
        LoopCycles.Leaf leaf = loop.leaf;
        InsnList code = mn.instructions;
        Type[] args = Type.getArgumentTypes(leaf.desc);
        Type ret = Type.getReturnType(leaf.desc);
        int r = slots.first;
        int[] argSlot = new int[args.length];
        int next = r + 1;
        for (int i = 0; i < args.length; i++) {
            argSlot[i] = next;
            next += args[i].getSize();
        }
        Object[] retStack = ret.getSort() == Type.VOID ? new Object[0] : new Object[] {ProbeInserter.frameType(ret)};
        List<Object> withR = new ArrayList<>(host);
        withR.add(Opcodes.INTEGER);

        InsnList p = new InsnList();
        for (int i = args.length - 1; i >= 0; i--) {
            p.add(new VarInsnNode(args[i].getOpcode(Opcodes.ISTORE), argSlot[i]));
        }
        p.add(ProbeInserter.pushInt(ProbeInserter.firstPath(loop)));
        p.add(new VarInsnNode(Opcodes.ISTORE, r));
        LabelNode start = new LabelNode();
        LabelNode end = new LabelNode();
        LabelNode joined = new LabelNode();
        LabelNode handler = new LabelNode();
        p.add(start);
        Map<LabelNode, LabelNode> labels = new IdentityHashMap<>();
        for (AbstractInsnNode n : leaf.body) {
            if (n instanceof LabelNode) {
                labels.put((LabelNode) n, new LabelNode());
            }
        }
        for (int i = 0; i < leaf.body.length; i++) {
            AbstractInsnNode n = leaf.body[i];
            int op = n.getOpcode();
            if (leaf.blockAt[i] > 0) {
                p.add(new IincInsnNode(r, 1 << (EventLayout.LOOP_CALL_PATH_SHIFT + leaf.blockAt[i])));
            }
            if (n instanceof FrameNode) {
                if (frames) {
                    FrameNode f = (FrameNode) n;
                    List<Object> local = new ArrayList<>(withR);
                    if (f.local != null) {
                        local.addAll(f.local);
                    }
                    Object[] stack = f.stack == null ? new Object[0] : f.stack.toArray();
                    p.add(new FrameNode(Opcodes.F_NEW, local.size(), local.toArray(), stack.length, stack));
                }
                continue;
            }
            if (op >= Opcodes.IRETURN && op <= Opcodes.RETURN) {
                p.add(new JumpInsnNode(Opcodes.GOTO, end));
                continue;
            }
            AbstractInsnNode copy = n.clone(labels);
            if (copy instanceof VarInsnNode) {
                ((VarInsnNode) copy).var += r + 1;
            } else if (copy instanceof IincInsnNode) {
                ((IincInsnNode) copy).var += r + 1;
            }
            p.add(copy);
        }
        p.add(end);
        if (frames) {
            p.add(new FrameNode(Opcodes.F_NEW, withR.size(), withR.toArray(), retStack.length, retStack));
        }
        p.add(new VarInsnNode(Opcodes.ILOAD, r));
        p.add(new VarInsnNode(Opcodes.ILOAD, slots.path));
        p.add(new JumpInsnNode(Opcodes.IF_ICMPEQ, joined));
        // The record's first call (it began at this step's header): its path is the record's.
        LabelNode split = new LabelNode();
        p.add(new VarInsnNode(Opcodes.ILOAD, slots.count));
        p.add(ProbeInserter.pushInt(loop.callSteps));
        p.add(new JumpInsnNode(Opcodes.IF_ICMPNE, split));
        p.add(new VarInsnNode(Opcodes.ILOAD, r));
        p.add(new VarInsnNode(Opcodes.ISTORE, slots.path));
        p.add(new JumpInsnNode(Opcodes.GOTO, joined));
        p.add(split);
        if (frames) {
            p.add(new FrameNode(Opcodes.F_NEW, withR.size(), withR.toArray(), retStack.length, retStack));
        }
        p.add(new VarInsnNode(Opcodes.ALOAD, slots.trace));
        p.add(new VarInsnNode(Opcodes.ILOAD, slots.base));
        p.add(new VarInsnNode(Opcodes.ILOAD, slots.count));
        p.add(ProbeInserter.pushInt(loop.callSteps));
        p.add(new VarInsnNode(Opcodes.ILOAD, r));
        p.add(ProbeInserter.loopShape(loop, classFirstId, slots.path));
        p.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "leafOffPath", "(" + TRACE_DESC + "IIIIIIIII)I", false));
        p.add(new VarInsnNode(Opcodes.ISTORE, slots.count));
        p.add(joined);
        if (frames) {
            p.add(new FrameNode(Opcodes.F_NEW, host.size(), host.toArray(), retStack.length, retStack));
        }
        code.insertBefore(loop.call, p);
        code.remove(loop.call);

        if (!leaf.canThrow) {
            return;
        }
        // The handler, after the rest of the code; the exception-exit handler covers it, so that
        // the real call's exception leaves the frame recorded.
        InsnList h = new InsnList();
        LabelNode handlerEnd = new LabelNode();
        h.add(handler);
        if (frames) {
            List<Object> local = new ArrayList<>(host);
            local.add(Opcodes.TOP);
            for (Type a : args) {
                local.add(ProbeInserter.frameType(a));
            }
            h.add(new FrameNode(Opcodes.F_NEW, local.size(), local.toArray(), 1, new Object[] {"java/lang/Throwable"}));
        }
        h.add(new InsnNode(Opcodes.POP));
        h.add(new VarInsnNode(Opcodes.ALOAD, slots.trace));
        h.add(new VarInsnNode(Opcodes.ILOAD, slots.base));
        h.add(new VarInsnNode(Opcodes.ILOAD, slots.count));
        h.add(new VarInsnNode(Opcodes.ILOAD, slots.mark));
        h.add(ProbeInserter.pushInt(loop.callSteps));
        h.add(ProbeInserter.loopShape(loop, classFirstId, slots.path));
        h.add(new MethodInsnNode(Opcodes.INVOKESTATIC, TRACER, "leafThrew", "(" + TRACE_DESC + "IIIIIIIII)I", false));
        h.add(new VarInsnNode(Opcodes.ISTORE, slots.count));
        for (int i = 0; i < args.length; i++) {
            h.add(new VarInsnNode(args[i].getOpcode(Opcodes.ILOAD), argSlot[i]));
        }
        h.add(new MethodInsnNode(Opcodes.INVOKESTATIC, leaf.owner, leaf.name, leaf.desc, false));
        h.add(new JumpInsnNode(Opcodes.GOTO, joined));
        h.add(handlerEnd);
        code.add(h);
        // First in the table: the body's own exceptions come here, not to the exception-exit handler.
        mn.tryCatchBlocks.add(0, new TryCatchBlockNode(start, end, handler, null));
        mn.tryCatchBlocks.add(new TryCatchBlockNode(handler, handlerEnd, exitHandler, null));
    }
}
