package jbgui.instr;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.analysis.Analyzer;
import org.objectweb.asm.tree.analysis.AnalyzerException;
import org.objectweb.asm.tree.analysis.BasicInterpreter;
import org.objectweb.asm.tree.analysis.BasicValue;

/**
 * How many monitors a method holds at each instruction ({@code synchronized} blocks).
 *
 * <p>The exception-exit handler must only cover instructions at depth 0: the JIT compilers
 * refuse to compile a method whose handler is reached with different numbers of held monitors
 * ("error while joining with exception handler"), which would leave it interpreted for good. And
 * nothing is lost: inside a {@code synchronized} block javac's own catch-any handler catches
 * every exception first, releases the monitor and rethrows from depth 0.
 */
final class MonitorDepth {
    private MonitorDepth() {}

    static boolean hasMonitors(AbstractInsnNode[] insns) {
        for (AbstractInsnNode insn : insns) {
            if (insn.getOpcode() == Opcodes.MONITORENTER) {
                return true;
            }
        }
        return false;
    }

    /** Per instruction of {@code insns}: the depth, or -1 where paths disagree or it is unreachable. */
    static int[] depths(String owner, MethodNode method, AbstractInsnNode[] insns) throws AnalyzerException {
        int size = method.instructions.size();
        List<List<int[]>> edges = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            edges.add(new ArrayList<>(2));
        }
        new Analyzer<BasicValue>(new BasicInterpreter()) {
            @Override
            protected void newControlFlowEdge(int insn, int successor) {
                edges.get(insn).add(new int[] {successor, 0});
            }

            @Override
            protected boolean newControlFlowExceptionEdge(int insn, int successor) {
                edges.get(insn).add(new int[] {successor, 1});
                return true;
            }
        }.analyze(owner, method);
        int[] depth = new int[size];
        java.util.Arrays.fill(depth, Integer.MIN_VALUE);
        boolean[] conflict = new boolean[size];
        ArrayDeque<Integer> work = new ArrayDeque<>();
        if (size > 0) {
            depth[0] = 0;
            work.add(0);
        }
        while (!work.isEmpty()) {
            int i = work.poll();
            int op = method.instructions.get(i).getOpcode();
            int after = depth[i] + (op == Opcodes.MONITORENTER ? 1 : op == Opcodes.MONITOREXIT ? -1 : 0);
            for (int[] e : edges.get(i)) {
                // An instruction that throws has not changed the monitors yet.
                int d = e[1] == 1 ? depth[i] : after;
                int s = e[0];
                if (depth[s] == Integer.MIN_VALUE) {
                    depth[s] = d;
                    work.add(s);
                } else if (depth[s] != d && !conflict[s]) {
                    conflict[s] = true;
                }
            }
        }
        int[] result = new int[insns.length];
        for (int k = 0; k < insns.length; k++) {
            int i = method.instructions.indexOf(insns[k]);
            result[k] = depth[i] == Integer.MIN_VALUE || conflict[i] ? -1 : depth[i];
        }
        return result;
    }
}
