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
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LineNumberNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.VarInsnNode;

/**
 * Static methods of several blocks that a loop's cycle may call with their body written in place
 * (LoopCycles.Leaf#multi): the compute kernel's sieve calls {@code isPrime(composite, i)}, {@code
 * return !composite[i]}, four blocks, two million times per run of its loop. Such a leaf:
 * <ul>
 * <li>is static, of the class itself, neither synchronized nor native, without handlers, and its
 *     first block's event is implied by its start (BlockElision), as for its real calls;</li>
 * <li>jumps only forward, so that a call's blocks are a path in ascending order, which one int
 *     tells (a bit per block; the record's fifth word, EventLayout.LOOP_PATH_FLAG), and has at
 *     most {@link #MAX_BLOCKS} blocks, so that the bits fit one {@code iinc} each;</li>
 * <li>is pure: it stores nothing but its own locals (no field or array store), calls and
 *     allocates nothing, and loads no class (LoopCycles.quiet), and never writes its parameters.
 *     So when its body in place throws (an array index, a division, a null), the real call made
 *     with the same arguments throws the same exception, with the leaf's frame in its stack trace
 *     (Tracer.leafThrew).</li>
 * </ul>
 */
final class PureLeaves {
    private PureLeaves() {}

    /** Block j of the leaf adds {@code 1 << (EventLayout.LOOP_CALL_PATH_SHIFT + j)}: a wide iinc holds up to 2^14. */
    static final int MAX_BLOCKS = 10;

    /** The leaf for {@code mn}, or null when it is not one. */
    static LoopCycles.Leaf of(MethodNode mn, String owner, BlockAnalysis ba, int id) {
        int n = ba.blockCount();
        if ((mn.access & (Opcodes.ACC_STATIC | Opcodes.ACC_SYNCHRONIZED | Opcodes.ACC_NATIVE | Opcodes.ACC_ABSTRACT))
                != Opcodes.ACC_STATIC || mn.name.charAt(0) == '<' || !mn.tryCatchBlocks.isEmpty() || n < 2
                || n > MAX_BLOCKS) {
            return null;
        }
        if (Type.getReturnType(mn.desc).getSort() >= Type.ARRAY) {
            return null;   // a reference's frame type would need its class's hierarchy to verify
        }
        int params = 0;
        for (Type t : Type.getArgumentTypes(mn.desc)) {
            params += t.getSize();
        }
        boolean canThrow = false;
        for (int i = 0; i < ba.insns.length; i++) {
            AbstractInsnNode insn = ba.insns[i];
            int op = insn.getOpcode();
            if (!LoopCycles.quiet(insn, owner) || op == Opcodes.GETFIELD || op == Opcodes.PUTFIELD
                    || (op >= Opcodes.IASTORE && op <= Opcodes.SASTORE) || op == Opcodes.NEWARRAY) {
                return null;
            }
            if ((op >= Opcodes.ISTORE && op <= Opcodes.ASTORE && ((VarInsnNode) insn).var < params)
                    || (op == Opcodes.IINC && ((IincInsnNode) insn).var < params)) {
                return null;
            }
            for (LabelNode target : BlockAnalysis.branchTargets(insn)) {
                if (ba.labelIndex.get(target) <= i) {
                    return null;
                }
            }
            canThrow |= BlockAnalysis.mayThrow(op);
        }
        // The body as it is before any probe (the method gets its own probes later): its
        // instructions, labels and frames, copied.
        Map<AbstractInsnNode, Integer> index = new IdentityHashMap<>();
        for (int i = 0; i < ba.insns.length; i++) {
            index.put(ba.insns[i], i);
        }
        Map<LabelNode, LabelNode> labels = new IdentityHashMap<>();
        for (AbstractInsnNode x = mn.instructions.getFirst(); x != null; x = x.getNext()) {
            if (x instanceof LabelNode) {
                labels.put((LabelNode) x, new LabelNode());
            }
        }
        List<AbstractInsnNode> body = new ArrayList<>();
        List<Integer> blockAt = new ArrayList<>();
        for (AbstractInsnNode x = mn.instructions.getFirst(); x != null; x = x.getNext()) {
            if (x instanceof LineNumberNode) {
                continue;
            }
            if (x.getOpcode() < 0 && !(x instanceof LabelNode) && !(x instanceof FrameNode)) {
                continue;
            }
            Integer i = index.get(x);
            int block = -1;
            if (i != null && ba.blockStarts[ba.blockOf[i]] == i) {
                block = ba.blockOf[i];
            }
            body.add(x.clone(labels));
            blockAt.add(block);
        }
        LoopCycles.Leaf leaf = new LoopCycles.Leaf(id, body.toArray(new AbstractInsnNode[0]), mn.maxLocals, mn.maxStack);
        leaf.multi = true;
        leaf.blockAt = new int[blockAt.size()];
        for (int i = 0; i < leaf.blockAt.length; i++) {
            leaf.blockAt[i] = blockAt.get(i);
        }
        leaf.canThrow = canThrow;
        leaf.owner = owner;
        leaf.name = mn.name;
        leaf.desc = mn.desc;
        return leaf;
    }
}
