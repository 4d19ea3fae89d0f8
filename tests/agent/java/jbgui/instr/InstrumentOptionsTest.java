package jbgui.instr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class InstrumentOptionsTest {
    @Test
    void defaultsRecordEverythingWithoutAListing() {
        InstrumentOptions o = InstrumentOptions.builder().build();
        assertTrue(o.blockLevel && o.blockEvents && o.receiverEvents && o.exceptionExitEvents && o.blockingStamps);
        assertFalse(o.precise);
        assertFalse(o.instructions);
        assertEquals("\n", o.listingSeparator);
    }

    @Test
    void eachSwitchSetsItsOwnField() {
        InstrumentOptions o = InstrumentOptions.builder().blockLevel(false).precise(true).instructions(true)
                .blockEvents(false).receiverEvents(false).exceptionExitEvents(false).blockingStamps(false)
                .listingSeparator("&#13;").build();
        assertFalse(o.blockLevel || o.blockEvents || o.receiverEvents || o.exceptionExitEvents || o.blockingStamps);
        assertTrue(o.precise && o.instructions);
        assertEquals("&#13;", o.listingSeparator);
        InstrumentOptions only = InstrumentOptions.builder().receiverEvents(false).build();
        assertTrue(only.blockLevel && only.blockEvents && only.exceptionExitEvents && only.blockingStamps);
        assertFalse(only.receiverEvents);
    }
}
