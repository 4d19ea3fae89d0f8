package jbgui.instr;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.objectweb.asm.tree.AbstractInsnNode;

/** The 19 metrics, counted on blocks whose bytecode the targets spell out. */
class MetricsTest {
    private static final String OWNER = "jbgui/instr/Targets";

    private static int[] of(String method) {
        AbstractInsnNode[] insns = TestSupport.insns(method);
        return Metrics.of(insns, 0, insns.length, OWNER);
    }

    @Test
    void arrayLoadsReferenceLoadsAndTheReturn() {
        int[] m = of("sum");
        //             insns loads stores float aload branch always
        assertArrayEquals(new int[] {8, 2, 0, 0, 2, 1, 1}, java.util.Arrays.copyOf(m, 7));
        assertEquals(0, m[15] + m[16] + m[17] + m[18]);
    }

    @Test
    void ownFieldsByKindAndDirection() {
        int[] bump = of("bump");
        assertEquals(1, bump[9], "own primitive field read");
        assertEquals(1, bump[10], "own primitive field write");
        assertEquals(0, bump[7] + bump[8] + bump[11] + bump[12] + bump[13] + bump[14]);
        int[] remember = of("remember");
        assertEquals(1, remember[8], "own reference field write");
        assertEquals(0, remember[7] + remember[9] + remember[10]);
    }

    @Test
    void callsToOtherClassesStaticAndFloatingPoint() {
        int[] m = of("callSqrt");
        assertEquals(1, m[15], "a call to another class");
        assertEquals(1, m[18], "a static call");
        assertEquals(0, m[17], "no virtual call");
        assertEquals(1, m[3], "dmul");
    }

    @Test
    void aRangeCountsOnlyItsInstructions() {
        AbstractInsnNode[] insns = TestSupport.insns("abs");
        assertEquals(2, Metrics.of(insns, 0, 2, OWNER)[0]);
        assertEquals(1, Metrics.of(insns, 0, 2, OWNER)[5], "ifge is a branch");
        assertEquals(0, Metrics.of(insns, 0, 2, OWNER)[6], "but not an unconditional one");
        assertEquals(Metrics.COUNT, Metrics.of(insns, 0, 0, OWNER).length);
    }
}
