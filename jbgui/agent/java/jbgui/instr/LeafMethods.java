package jbgui.instr;

import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.VarInsnNode;
import org.objectweb.asm.tree.analysis.Analyzer;
import org.objectweb.asm.tree.analysis.AnalyzerException;
import org.objectweb.asm.tree.analysis.Frame;
import org.objectweb.asm.tree.analysis.BasicInterpreter;
import org.objectweb.asm.tree.analysis.BasicValue;

/**
 * Methods whose start and end the entry probe can record together, because nothing can happen on
 * the thread between them that the trace would show: getters, setters, arithmetic on arguments.
 *
 * <p>Such a method calls nothing (no invoke, no {@code getstatic}/{@code putstatic}, which may run
 * a class initializer, no {@code new}, no class constant, which may load a class), cannot throw
 * (no array access, no integer division, no cast or {@code instanceof}, no {@code athrow}, no
 * field access but on {@code this}), holds no monitor and has no handler, and runs straight to a
 * return: its jumps all go forward, so it cannot loop. At block level it also has a single block
 * whose event the start implies (BlockElision), so its events are the start, the receiver word
 * where there is one, and the end, in that order, whatever the arguments. The entry probe
 * (Tracer.leaf, static or with the receiver) stores those words at once and the method gets no
 * exit probe, no exception-exit handler and no new locals: the trace holds the same words as with
 * the full probes (readers cannot tell), the program's thread makes one probe call instead of two,
 * and the method stays small enough for HotSpot to inline where it is called (MaxInlineSize, 35
 * bytes of bytecode: {@code return value;} is 20 bytes with its leaf probe, 42 with the full
 * probes).
 *
 * <p>What it leaves out: a StackOverflowError or an asynchronous exception (Thread.stop) inside
 * such a method is recorded as a normal end; with the full probes it would be an exception exit.
 */
final class LeafMethods {
    private LeafMethods() {}

    /**
     * @param owner the class's internal name (fields may be read and written on {@code this},
     *     through field references that name this class: resolving them loads nothing)
     * @param blocks whether the method records blocks; then it must be one block whose event the
     *     start implies ({@code entryImplied})
     */
    static boolean isLeaf(MethodNode mn, String owner, BlockAnalysis ba, boolean blocks, boolean entryImplied) {
        if ((mn.access & (Opcodes.ACC_SYNCHRONIZED | Opcodes.ACC_NATIVE | Opcodes.ACC_ABSTRACT)) != 0
                || mn.name.charAt(0) == '<' || !mn.tryCatchBlocks.isEmpty() || ba.insns.length == 0) {
            return false;
        }
        if (blocks && (ba.blockCount() != 1 || !entryImplied)) {
            return false;
        }
        boolean fields = false;
        for (int i = 0; i < ba.insns.length; i++) {
            AbstractInsnNode insn = ba.insns[i];
            int op = insn.getOpcode();
            if (op == Opcodes.GETFIELD || op == Opcodes.PUTFIELD) {
                if ((mn.access & Opcodes.ACC_STATIC) != 0 || !((FieldInsnNode) insn).owner.equals(owner)) {
                    return false;
                }
                fields = true;
            } else if (op == Opcodes.LDC) {
                Object c = ((LdcInsnNode) insn).cst;
                if (!(c instanceof Number || c instanceof String)) {
                    return false;
                }
            } else if (!plain(op)) {
                return false;
            }
            for (LabelNode target : BlockAnalysis.branchTargets(insn)) {
                if (ba.labelIndex.get(target) <= i) {
                    return false;
                }
            }
        }
        return !fields || fieldsOnThis(mn, owner);
    }

    /** Instructions that neither call, nor throw, nor touch the heap (jumps are checked apart). */
    private static boolean plain(int op) {
        switch (op) {
            case Opcodes.IDIV: case Opcodes.LDIV: case Opcodes.IREM: case Opcodes.LREM:
            case Opcodes.JSR: case Opcodes.RET:
                return false;
            default:
                return (op >= Opcodes.NOP && op <= Opcodes.SIPUSH)              // constants
                        || (op >= Opcodes.ILOAD && op <= Opcodes.ALOAD)         // locals
                        || (op >= Opcodes.ISTORE && op <= Opcodes.ASTORE)
                        || (op >= Opcodes.POP && op <= Opcodes.LXOR)            // stack, arithmetic
                        || (op >= Opcodes.IINC && op <= Opcodes.LOOKUPSWITCH)   // conversions, compares, jumps
                        || op == Opcodes.IFNULL || op == Opcodes.IFNONNULL
                        || (op >= Opcodes.IRETURN && op <= Opcodes.RETURN);
        }
    }

    /**
     * Whether every field instruction's object is {@code this}: local 0 of an instance method, which
     * nothing stores to, through loads and dups (a data-flow analysis, for the few methods the scan
     * leaves).
     */
    private static boolean fieldsOnThis(MethodNode mn, String owner) {
        for (AbstractInsnNode n = mn.instructions.getFirst(); n != null; n = n.getNext()) {
            int op = n.getOpcode();
            if (op >= Opcodes.ISTORE && op <= Opcodes.ASTORE && ((VarInsnNode) n).var == 0) {
                return false;
            }
        }
        ThisInterpreter interpreter = new ThisInterpreter(owner);
        Frame<BasicValue>[] frames;
        try {
            frames = new Analyzer<>(interpreter).analyze(owner, mn);
        } catch (AnalyzerException e) {
            return false;
        }
        int i = 0;
        for (AbstractInsnNode n = mn.instructions.getFirst(); n != null; n = n.getNext(), i++) {
            int op = n.getOpcode();
            Frame<BasicValue> f = frames[i];
            if ((op == Opcodes.GETFIELD || op == Opcodes.PUTFIELD) && f != null
                    && f.getStack(f.getStackSize() - (op == Opcodes.GETFIELD ? 1 : 2)) != interpreter.self) {
                return false;
            }
        }
        return true;
    }

    /** BasicInterpreter with one value of its own: {@code this}, kept by loads and dups, lost where paths merge with another. */
    private static final class ThisInterpreter extends BasicInterpreter {
        final BasicValue self;

        ThisInterpreter(String owner) {
            super(Opcodes.ASM9);
            self = new BasicValue(Type.getObjectType(owner));
        }

        @Override
        public BasicValue newParameterValue(boolean isInstanceMethod, int local, Type type) {
            return isInstanceMethod && local == 0 ? self : super.newParameterValue(isInstanceMethod, local, type);
        }

        @Override
        public BasicValue merge(BasicValue a, BasicValue b) {
            if (a == b) {
                return a;
            }
            return a == self || b == self ? BasicValue.REFERENCE_VALUE : super.merge(a, b);
        }
    }
}
