package jbgui.instr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.MethodNode;

/**
 * Monitors held per instruction. javac compiles {@code locked()} to
 * <pre>
 *  0 aload_0  1 dup  2 astore_1  3 monitorenter       depth 0 up to and at monitorenter
 *  4 aload_0  5 getfield  8 aload_1  9 monitorexit     depth 1 inside
 * 10 ireturn                                           depth 0
 * 11 astore_2 12 aload_1 13 monitorexit                handler (covers 4..10 and itself): depth 1
 * 14 aload_2 15 athrow                                 depth 0
 * </pre>
 */
class MonitorDepthTest {
    /** The depths of one parse of the method (its instruction nodes know their index in it). */
    private static int[] depths(String name) throws Exception {
        MethodNode m = TestSupport.method(Targets.class, name);
        AbstractInsnNode[] insns = BlockAnalysis.analyze(m, false).insns;
        return MonitorDepth.depths("jbgui/instr/Targets", m, insns);
    }

    @Test
    void synchronizedBlockHoldsOneMonitorBetweenEnterAndExit() throws Exception {
        AbstractInsnNode[] insns = TestSupport.insns("locked");
        assertTrue(MonitorDepth.hasMonitors(insns));
        int[] d = depths("locked");
        assertEquals(insns.length, d.length);
        int enter = -1;
        int firstExit = -1;
        for (int k = 0; k < insns.length; k++) {
            if (insns[k].getOpcode() == Opcodes.MONITORENTER && enter < 0) {
                enter = k;
            }
            if (insns[k].getOpcode() == Opcodes.MONITOREXIT && firstExit < 0) {
                firstExit = k;
            }
        }
        StringBuilder seen = new StringBuilder();
        for (int k = 0; k < insns.length; k++) {
            seen.append(insns[k].getOpcode()).append(':').append(d[k]).append(' ');
        }
        for (int k = 0; k <= enter; k++) {
            assertEquals(0, d[k], "before and at monitorenter, instruction " + k);
        }
        for (int k = enter + 1; k <= firstExit; k++) {
            assertEquals(1, d[k], "inside, instruction " + k + " of " + seen);
        }
        assertEquals(Opcodes.IRETURN, insns[firstExit + 1].getOpcode());
        assertEquals(0, d[firstExit + 1], "the return after monitorexit");
        // the catch-any handler releases the monitor and rethrows from depth 0
        int athrow = insns.length - 1;
        assertEquals(Opcodes.ATHROW, insns[athrow].getOpcode());
        assertEquals(0, d[athrow]);
        assertEquals(1, d[firstExit + 2], "the handler's first instruction still holds the monitor");
    }

    @Test
    void methodsWithoutMonitorsAreDepthZeroThroughout() throws Exception {
        for (String name : new String[] {"straight", "abs", "loop", "guarded", "pick"}) {
            assertFalse(MonitorDepth.hasMonitors(TestSupport.insns(name)), name);
            for (int v : depths(name)) {
                assertEquals(0, v, name);
            }
        }
    }
}
