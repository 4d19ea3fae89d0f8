package jbgui.instr;

import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;

/**
 * The 19 static metrics of a basic block, in JBInsTrace's order (seed §3.2.1; names in
 * jbgui.output.MetricNames, definitions in docs/trace-format.md).
 */
final class Metrics {
    private Metrics() {}

    static final int COUNT = 19;

    static int[] of(AbstractInsnNode[] insns, int from, int to, String owner) {
        int[] m = new int[COUNT];
        for (int i = from; i < to; i++) {
            AbstractInsnNode insn = insns[i];
            int op = insn.getOpcode();
            m[0]++;
            if (op >= Opcodes.IALOAD && op <= Opcodes.SALOAD) {
                m[1]++;
            } else if (op >= Opcodes.IASTORE && op <= Opcodes.SASTORE) {
                m[2]++;
            }
            if (isFloatOp(op)) {
                m[3]++;
            }
            if (op == Opcodes.ALOAD) {
                m[4]++;
            }
            boolean conditional = (op >= Opcodes.IFEQ && op <= Opcodes.IF_ACMPNE) || op == Opcodes.IFNULL
                    || op == Opcodes.IFNONNULL;
            boolean always = op == Opcodes.GOTO || op == Opcodes.JSR || op == Opcodes.RET
                    || op == Opcodes.TABLESWITCH || op == Opcodes.LOOKUPSWITCH
                    || (op >= Opcodes.IRETURN && op <= Opcodes.RETURN) || op == Opcodes.ATHROW;
            if (conditional || always) {
                m[5]++;
            }
            if (always) {
                m[6]++;
            }
            if (insn instanceof FieldInsnNode) {
                FieldInsnNode f = (FieldInsnNode) insn;
                boolean own = f.owner.equals(owner);
                boolean ref = f.desc.charAt(0) == 'L' || f.desc.charAt(0) == '[';
                boolean read = op == Opcodes.GETFIELD || op == Opcodes.GETSTATIC;
                int base = own ? 7 : 11;
                m[base + (ref ? 0 : 2) + (read ? 0 : 1)]++;
            }
            if (insn instanceof MethodInsnNode || op == Opcodes.INVOKEDYNAMIC) {
                if (insn instanceof MethodInsnNode && !((MethodInsnNode) insn).owner.equals(owner)) {
                    m[15]++;
                }
                if (op == Opcodes.INVOKEVIRTUAL || op == Opcodes.INVOKEINTERFACE) {
                    m[17]++;
                } else if (op == Opcodes.INVOKESTATIC) {
                    m[18]++;
                }
            }
            if (op == Opcodes.NEW || op == Opcodes.NEWARRAY || op == Opcodes.ANEWARRAY || op == Opcodes.MULTIANEWARRAY) {
                m[16]++;
            }
        }
        return m;
    }

    private static boolean isFloatOp(int op) {
        switch (op) {
            case Opcodes.FADD: case Opcodes.DADD: case Opcodes.FSUB: case Opcodes.DSUB:
            case Opcodes.FMUL: case Opcodes.DMUL: case Opcodes.FDIV: case Opcodes.DDIV:
            case Opcodes.FREM: case Opcodes.DREM: case Opcodes.FNEG: case Opcodes.DNEG:
            case Opcodes.I2F: case Opcodes.I2D: case Opcodes.L2F: case Opcodes.L2D:
            case Opcodes.F2I: case Opcodes.F2L: case Opcodes.F2D: case Opcodes.D2I: case Opcodes.D2L: case Opcodes.D2F:
            case Opcodes.FCMPL: case Opcodes.FCMPG: case Opcodes.DCMPL: case Opcodes.DCMPG:
                return true;
            default:
                return false;
        }
    }
}
