package jbgui.output;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** trace.json's class and method counts when two threads' reports arrive out of order. */
class DescribedCountsTest {
    @Test
    void aLateReportOfSmallerTotalsDoesNotLowerTheCounts() {
        DescribedCounts counts = new DescribedCounts();
        counts.described(1144, 20_001, true, false);     // the thread that registered second reports first
        counts.described(1143, 20_000, false, false);
        assertEquals(1144, counts.classes());
        assertEquals(20_001, counts.methods());
        assertEquals(1, counts.instrumented());
        assertEquals(1, counts.notInstrumented());
        assertFalse(counts.idsExhausted());
    }

    @Test
    void exhaustionOnceReportedStays() {
        DescribedCounts counts = new DescribedCounts();
        counts.described(1, 10, true, true);
        counts.described(2, 10, true, false);
        assertTrue(counts.idsExhausted());
        assertEquals(2, counts.classes());
    }
}
