package jbgui.instr;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;
import org.objectweb.asm.tree.TryCatchBlockNode;

/**
 * Splits a method's code into basic blocks (BMW's two analyses, seed 004 §3.1).
 *
 * <p>Default: a block starts at the entry, at every jump and switch target, at every handler,
 * at every try-range boundary (so a handler covers a block wholly or not at all, which makes the
 * handler lists exact for replay) and after every control-transfer instruction; calls do not end
 * blocks. Precise: every instruction that may throw ends a block too. The explorer's JVM bridge
 * lists blocks from class files with this same code (StaticListing), so the two cannot drift.
 */
public final class BlockAnalysis {
    /** The method's instructions (pseudo-nodes such as labels and frames left out). */
    public final AbstractInsnNode[] insns;
    /** Index into {@link #insns} of each block's first instruction, ascending. */
    public final int[] blockStarts;
    /** For every instruction: its block. */
    public final int[] blockOf;
    /** Label → index of the instruction it marks (insns.length for a label after the last one). */
    public final Map<LabelNode, Integer> labelIndex;

    private BlockAnalysis(AbstractInsnNode[] insns, int[] blockStarts, int[] blockOf, Map<LabelNode, Integer> labelIndex) {
        this.insns = insns;
        this.blockStarts = blockStarts;
        this.blockOf = blockOf;
        this.labelIndex = labelIndex;
    }

    public int blockCount() {
        return blockStarts.length;
    }

    /** Index of the instruction after the block's last one. */
    public int blockEnd(int block) {
        return block + 1 < blockStarts.length ? blockStarts[block + 1] : insns.length;
    }

    public static BlockAnalysis analyze(MethodNode method, boolean precise) {
        List<AbstractInsnNode> real = new ArrayList<>();
        Map<LabelNode, Integer> labelIndex = new IdentityHashMap<>();
        List<LabelNode> pending = new ArrayList<>();
        for (AbstractInsnNode n = method.instructions.getFirst(); n != null; n = n.getNext()) {
            if (n instanceof LabelNode) {
                pending.add((LabelNode) n);
            } else if (n.getOpcode() >= 0) {
                for (LabelNode l : pending) {
                    labelIndex.put(l, real.size());
                }
                pending.clear();
                real.add(n);
            }
        }
        for (LabelNode l : pending) {
            labelIndex.put(l, real.size());
        }
        AbstractInsnNode[] insns = real.toArray(new AbstractInsnNode[0]);
        int n = insns.length;
        boolean[] leader = new boolean[n + 1];
        if (n > 0) {
            leader[0] = true;
        }
        for (int i = 0; i < n; i++) {
            AbstractInsnNode insn = insns[i];
            List<LabelNode> targets = branchTargets(insn);
            for (LabelNode l : targets) {
                leader[labelIndex.get(l)] = true;
            }
            if (!targets.isEmpty() || endsFlow(insn.getOpcode()) || (precise && mayThrow(insn.getOpcode()))) {
                leader[i + 1] = true;
            }
        }
        for (TryCatchBlockNode tc : method.tryCatchBlocks) {
            leader[labelIndex.get(tc.start)] = true;
            leader[labelIndex.get(tc.end)] = true;
            leader[labelIndex.get(tc.handler)] = true;
        }
        int count = 0;
        for (int i = 0; i < n; i++) {
            if (leader[i]) {
                count++;
            }
        }
        int[] starts = new int[count];
        int[] blockOf = new int[n];
        int b = -1;
        for (int i = 0; i < n; i++) {
            if (leader[i]) {
                starts[++b] = i;
            }
            blockOf[i] = b;
        }
        return new BlockAnalysis(insns, starts, blockOf, labelIndex);
    }

    /** The labels a jump or switch can transfer control to; empty for other instructions. */
    static List<LabelNode> branchTargets(AbstractInsnNode insn) {
        if (insn instanceof JumpInsnNode) {
            return List.of(((JumpInsnNode) insn).label);
        }
        List<LabelNode> targets = new ArrayList<>();
        if (insn instanceof TableSwitchInsnNode) {
            targets.add(((TableSwitchInsnNode) insn).dflt);
            targets.addAll(((TableSwitchInsnNode) insn).labels);
        } else if (insn instanceof LookupSwitchInsnNode) {
            targets.add(((LookupSwitchInsnNode) insn).dflt);
            targets.addAll(((LookupSwitchInsnNode) insn).labels);
        }
        return targets;
    }

    /** Returns, athrow, ret: control never falls through to the next instruction. */
    static boolean endsFlow(int op) {
        return (op >= Opcodes.IRETURN && op <= Opcodes.RETURN) || op == Opcodes.ATHROW || op == Opcodes.RET;
    }

    /** Instructions that may throw (PreciseBBA). */
    static boolean mayThrow(int op) {
        switch (op) {
            case Opcodes.IALOAD: case Opcodes.LALOAD: case Opcodes.FALOAD: case Opcodes.DALOAD:
            case Opcodes.AALOAD: case Opcodes.BALOAD: case Opcodes.CALOAD: case Opcodes.SALOAD:
            case Opcodes.IASTORE: case Opcodes.LASTORE: case Opcodes.FASTORE: case Opcodes.DASTORE:
            case Opcodes.AASTORE: case Opcodes.BASTORE: case Opcodes.CASTORE: case Opcodes.SASTORE:
            case Opcodes.IDIV: case Opcodes.IREM: case Opcodes.LDIV: case Opcodes.LREM:
            case Opcodes.GETSTATIC: case Opcodes.PUTSTATIC: case Opcodes.GETFIELD: case Opcodes.PUTFIELD:
            case Opcodes.INVOKEVIRTUAL: case Opcodes.INVOKESPECIAL: case Opcodes.INVOKESTATIC:
            case Opcodes.INVOKEINTERFACE: case Opcodes.INVOKEDYNAMIC:
            case Opcodes.NEW: case Opcodes.NEWARRAY: case Opcodes.ANEWARRAY: case Opcodes.MULTIANEWARRAY:
            case Opcodes.ARRAYLENGTH: case Opcodes.ATHROW: case Opcodes.CHECKCAST:
            case Opcodes.MONITORENTER: case Opcodes.MONITOREXIT:
                return true;
            default:
                return false;
        }
    }
}
