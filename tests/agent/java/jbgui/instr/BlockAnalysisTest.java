package jbgui.instr;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.MethodNode;

class BlockAnalysisTest {

    @Test
    void straightLineCodeIsOneBlock() {
        BlockAnalysis a = TestSupport.blocks("straight", false);
        assertEquals(8, a.insns.length);
        assertArrayEquals(new int[] {0}, a.blockStarts);
    }

    @Test
    void aBranchStartsBlocksAtItsTargetAndAfterIt() {
        BlockAnalysis a = TestSupport.blocks("abs", false);
        assertArrayEquals(new int[] {0, 2, 5}, a.blockStarts);
        assertEquals(Opcodes.IFGE, a.insns[1].getOpcode());
        assertEquals(5, a.blockEnd(1));
        assertEquals(7, a.blockEnd(2));
    }

    @Test
    void callsAndDivisionsEndBlocksOnlyWhenPrecise() {
        assertArrayEquals(new int[] {0}, TestSupport.blocks("div", false).blockStarts);
        assertArrayEquals(new int[] {0, 3}, TestSupport.blocks("div", true).blockStarts);
        // a call ends a block in precise mode (it may throw), never in the default one
        assertEquals(1, TestSupport.blocks("callSqrt", false).blockCount());
        assertEquals(2, TestSupport.blocks("callSqrt", true).blockCount());
    }

    @Test
    void aHandlerIsABlockAndTheTryRangeEndsOne() {
        BlockAnalysis a = TestSupport.blocks("guarded", false);
        // javac's try range is [0, 3): the ireturn after it is outside, so its block ends there
        assertArrayEquals(new int[] {0, 3, 4}, a.blockStarts);
        assertEquals(Opcodes.IRETURN, a.insns[3].getOpcode());
        assertEquals(Opcodes.ASTORE, a.insns[4].getOpcode());   // the handler stores the exception
    }

    @Test
    void everyCaseOfASwitchIsABlock() {
        BlockAnalysis a = TestSupport.blocks("pick", false);
        // the switch's block, then four cases of ldc + areturn
        assertEquals(5, a.blockCount());
        for (int b = 1; b < 5; b++) {
            assertEquals(Opcodes.LDC, a.insns[a.blockStarts[b]].getOpcode());
            assertEquals(2, a.blockEnd(b) - a.blockStarts[b]);
        }
    }

    @Test
    void aLoopHeadIsABlockOfItsOwn() {
        BlockAnalysis a = TestSupport.blocks("loop", false);
        boolean headFound = false;
        for (int b = 0; b < a.blockCount(); b++) {
            int first = a.insns[a.blockStarts[b]].getOpcode();
            int last = a.insns[a.blockEnd(b) - 1].getOpcode();
            if (first == Opcodes.ILOAD && last == Opcodes.IF_ICMPGE) {
                headFound = true;       // i < n: the loop's test, reached from the entry and the back edge
            }
        }
        assertTrue(headFound, "no block holds the loop's test alone");
        assertTrue(a.blockCount() >= 3);
    }

    @Test
    void blockOfAgreesWithTheStartsInEveryMethodAndMode() {
        for (MethodNode m : TestSupport.tree(TestSupport.bytes(Targets.class)).methods) {
            for (boolean precise : new boolean[] {false, true}) {
                BlockAnalysis a = BlockAnalysis.analyze(m, precise);
                assertEquals(0, a.blockStarts[0], m.name);
                for (int b = 0; b < a.blockCount(); b++) {
                    for (int i = a.blockStarts[b]; i < a.blockEnd(b); i++) {
                        assertEquals(b, a.blockOf[i], m.name + " instruction " + i);
                    }
                }
                assertTrue(BlockAnalysis.analyze(m, true).blockCount() >= BlockAnalysis.analyze(m, false).blockCount(),
                        m.name + ": precise cuts at least the default's blocks");
            }
        }
    }
}
