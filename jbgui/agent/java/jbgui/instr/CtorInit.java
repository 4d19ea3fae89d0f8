package jbgui.instr;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;
import org.objectweb.asm.tree.TryCatchBlockNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.VarInsnNode;
import org.objectweb.asm.tree.analysis.Analyzer;
import org.objectweb.asm.tree.analysis.AnalyzerException;
import org.objectweb.asm.tree.analysis.Frame;
import org.objectweb.asm.tree.analysis.SourceInterpreter;
import org.objectweb.asm.tree.analysis.SourceValue;

/**
 * Where a constructor's {@code this} is still uninitialized: every instruction reachable from the
 * entry without passing the {@code invokespecial <init>} that initializes {@code this}. A handler
 * covering those instructions is not verifiable (the JVM's flagThisUninit rule), so the
 * exception-exit handler only covers the rest. Java 25's flexible constructor bodies put branches
 * before {@code super(…)}, so this follows the control flow instead of assuming a prefix.
 */
final class CtorInit {
    private CtorInit() {}

    /** Per instruction of {@code ba}: true where {@code this} may be uninitialized. */
    static boolean[] uninitialized(String owner, MethodNode method, BlockAnalysis ba) throws AnalyzerException {
        boolean[] linear = linear(method, ba);
        return linear != null ? linear : analyzed(owner, method, ba.insns);
    }

    /**
     * The fast path for code as javac lays it out: {@code new}/{@code <init>} pairs nest like
     * parentheses in code order, so the first {@code invokespecial <init>} not matching an earlier
     * {@code new} initializes {@code this}, and no jump crosses it. Returns null when the method
     * does not have that shape (then the data-flow analysis decides).
     */
    private static boolean[] linear(MethodNode method, BlockAnalysis ba) {
        AbstractInsnNode[] insns = ba.insns;
        int pending = 0;
        int init = -1;
        for (int i = 0; i < insns.length && init < 0; i++) {
            int op = insns[i].getOpcode();
            if (op == Opcodes.NEW) {
                pending++;
            } else if (op == Opcodes.INVOKESPECIAL && "<init>".equals(((MethodInsnNode) insns[i]).name)) {
                if (pending > 0) {
                    pending--;
                } else {
                    init = i;
                }
            }
        }
        if (init < 0 || pending != 0) {
            return null;
        }
        for (int i = 0; i < insns.length; i++) {
            for (LabelNode target : BlockAnalysis.branchTargets(insns[i])) {
                int t = ba.labelIndex.get(target);
                if ((i < init) != (t <= init)) {
                    return null; // a jump across the initialization
                }
            }
        }
        for (TryCatchBlockNode tc : method.tryCatchBlocks) {
            if (ba.labelIndex.get(tc.start) <= init) {
                return null;
            }
        }
        boolean[] result = new boolean[insns.length];
        for (int i = 0; i <= init; i++) {
            result[i] = true;
        }
        return result;
    }

    private static boolean[] analyzed(String owner, MethodNode method, AbstractInsnNode[] insns) throws AnalyzerException {
        int size = method.instructions.size();
        List<List<Integer>> successors = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            successors.add(new ArrayList<>(2));
        }
        Analyzer<SourceValue> analyzer = new Analyzer<SourceValue>(new SourceInterpreter()) {
            @Override
            protected void newControlFlowEdge(int insn, int successor) {
                successors.get(insn).add(successor);
            }

            @Override
            protected boolean newControlFlowExceptionEdge(int insn, int successor) {
                successors.get(insn).add(successor);
                return true;
            }
        };
        Frame<SourceValue>[] frames = analyzer.analyze(owner, method);
        boolean[] initCall = new boolean[size];
        for (int i = 0; i < size; i++) {
            AbstractInsnNode n = method.instructions.get(i);
            if (n.getOpcode() == Opcodes.INVOKESPECIAL && "<init>".equals(((MethodInsnNode) n).name) && frames[i] != null) {
                Frame<SourceValue> f = frames[i];
                int args = Type.getArgumentTypes(((MethodInsnNode) n).desc).length;
                SourceValue receiver = f.getStack(f.getStackSize() - 1 - args);
                boolean isThis = !receiver.insns.isEmpty();
                for (AbstractInsnNode p : receiver.insns) {
                    if (!(p instanceof VarInsnNode && p.getOpcode() == Opcodes.ALOAD && ((VarInsnNode) p).var == 0)) {
                        isThis = false;
                    }
                }
                initCall[i] = isThis;
            }
        }
        boolean[] reached = new boolean[size];
        ArrayDeque<Integer> work = new ArrayDeque<>();
        if (size > 0) {
            reached[0] = true;
            work.add(0);
        }
        while (!work.isEmpty()) {
            int i = work.poll();
            if (initCall[i]) {
                continue;
            }
            for (int s : successors.get(i)) {
                if (!reached[s]) {
                    reached[s] = true;
                    work.add(s);
                }
            }
        }
        boolean[] result = new boolean[insns.length];
        for (int k = 0; k < insns.length; k++) {
            result[k] = reached[method.instructions.indexOf(insns[k])];
        }
        return result;
    }
}
