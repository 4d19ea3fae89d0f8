package jbgui.instr;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.InsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.VarInsnNode;

import jbgui.runtime.EventLayout;

/**
 * Which block probes test for a full buffer (ProbeInserter.checkedBlocks): loop heads, handlers,
 * every block of a method too long for the buffer's slack, and none else.
 */
class CheckedBlocksTest {

    private static boolean[] checked(String name) {
        MethodNode m = TestSupport.method(Targets.class, name);
        return ProbeInserter.checkedBlocks(m, BlockAnalysis.analyze(m, false));
    }

    @Test
    void straightLineAndForwardBranchesDoNotTest() {
        assertArrayEquals(new boolean[] {false}, checked("straight"));
        assertArrayEquals(new boolean[] {false, false, false}, checked("abs"));
    }

    @Test
    void theHeadOfALoopTests() {
        // 0 iconst_0 istore_1 iconst_0 istore_2 | 4 iload_2 iload_0 if_icmpge 19 | 9 … goto 4 | 19 iload_1 ireturn
        assertArrayEquals(new boolean[] {false, true, false, false}, checked("loop"));
    }

    @Test
    void aHandlerTests() {
        // try [0, 3) | ireturn | handler: astore_1 iconst_m1 ireturn
        assertArrayEquals(new boolean[] {false, false, true}, checked("guarded"));
    }

    /** {@code n} blocks of {@code iload_0; ifeq next} (each branch ends one), then a return. */
    private static MethodNode chain(int n) {
        MethodNode m = new MethodNode(Opcodes.ACC_STATIC, "chain", "(I)V", null, null);
        for (int i = 0; i < n; i++) {
            LabelNode next = new LabelNode();
            m.instructions.add(new VarInsnNode(Opcodes.ILOAD, 0));
            m.instructions.add(new JumpInsnNode(Opcodes.IFEQ, next));
            m.instructions.add(next);
        }
        m.instructions.add(new InsnNode(Opcodes.RETURN));
        m.maxLocals = 1;
        m.maxStack = 1;
        return m;
    }

    private static int count(boolean[] flags) {
        int n = 0;
        for (boolean f : flags) {
            n += f ? 1 : 0;
        }
        return n;
    }

    @Test
    void aMethodLongerThanTheSlackTestsInEveryBlock() {
        int limit = EventLayout.UNCHECKED_RUN_MAX;
        // the bound the runtime relies on: a whole untested run fits the slack
        assertEquals(true, limit <= EventLayout.BUFFER_SLACK_EVENTS - 2);
        MethodNode shortOne = chain(limit - 1);
        boolean[] s = ProbeInserter.checkedBlocks(shortOne, BlockAnalysis.analyze(shortOne, false));
        assertEquals(limit, s.length);
        assertEquals(0, count(s));
        MethodNode longOne = chain(limit);
        boolean[] l = ProbeInserter.checkedBlocks(longOne, BlockAnalysis.analyze(longOne, false));
        assertEquals(limit + 1, l.length);
        assertEquals(limit + 1, count(l));
    }
}
