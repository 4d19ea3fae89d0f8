package jbgui.output;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.junit.jupiter.api.Test;

import jbgui.runtime.EventLayout;

/**
 * The writer's mapping of positions from stored words to events (a start word marked
 * START_ENTRY_IMPLIED stands for two events), with the writer's own record list.
 */
class EntryBlocksTest {
    private static final int MARKED = EventLayout.methodStart(7) | EventLayout.START_ENTRY_IMPLIED;
    private static final int START = EventLayout.methodStart(7);
    private static final int BLOCK = EventLayout.block(7, 3);
    private static final int END = EventLayout.methodEnd(7);
    private static final int RECEIVER = EventLayout.extended(EventLayout.EXT_RECEIVER, 5);

    /** The positions of the written records (clock.bin's layout), in order. */
    private static long[] positions(ClockRecords records) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        records.writeTo(out);
        ByteBuffer b = ByteBuffer.wrap(out.toByteArray()).order(ByteOrder.LITTLE_ENDIAN);
        long[] p = new long[b.capacity() / EventLayout.CLOCK_RECORD_SIZE];
        for (int i = 0; i < p.length; i++) {
            p[i] = b.getLong(i * EventLayout.CLOCK_RECORD_SIZE + 8);
        }
        return p;
    }

    @Test
    void marksAreCountedWhateverTheOtherBits() {
        // Only a start with the flag counts: not an unmarked start, a block, an end, an extended word
        // (whose value may have bit 0 set), nor words with the sign bit set.
        int[] words = {MARKED, START, BLOCK, END, RECEIVER, EventLayout.extended(EventLayout.EXT_RECEIVER, 1),
                       MARKED, -1, 0, Integer.MIN_VALUE | 1, EventLayout.block(7, 1), MARKED};
        assertEquals(3, EntryBlocks.flagged(words, 0, words.length));
        assertEquals(1, EntryBlocks.flagged(words, 1, 7));
        assertEquals(0, EntryBlocks.flagged(words, 1, 6));
        assertEquals(0, EntryBlocks.flagged(words, 4, 4));
    }

    @Test
    void positionsMoveUpByTheBlocksInsertedBeforeThem() throws Exception {
        EntryBlocks e = new EntryBlocks();
        ClockRecords ready = new ClockRecords();
        // a record for stored position 3 of thread 1 arrives before the chunk holding it
        e.clock(1, 3, 100, EventLayout.CLOCK_FLAG_EXACT, EntryBlocks.UNKNOWN, ready);
        e.clock(1, 1, 90, EventLayout.CLOCK_FLAG_EXACT, EntryBlocks.UNKNOWN, ready);  // comes later, earlier position
        assertEquals(0, ready.size());
        int[] chunk = {MARKED, BLOCK, MARKED, RECEIVER, END, END};
        e.count(1, chunk, chunk.length, 0, 0, 0, ready);
        assertEquals(8, e.events);
        assertEquals(0, e.first);
        // sorted by position; position 1 follows one marked start, position 3 two
        assertArrayEquals(new long[] {2, 5}, positions(ready));
        // at the written end: moved by all the words inserted so far
        e.clock(1, 6, 110, EventLayout.CLOCK_FLAG_EXACT, EntryBlocks.UNKNOWN, ready);
        assertArrayEquals(new long[] {8}, positions(ready));
        // the next chunk starts after the inserted words; another thread's stream is its own
        int[] next = {BLOCK, MARKED};
        e.count(1, next, next.length, 6, 0, 0, ready);
        assertEquals(8, e.first);
        assertEquals(3, e.events);
        e.count(2, next, next.length, 0, 0, 0, ready);
        assertEquals(0, e.first);
        assertEquals(8 + 3, e.written(1, 8));
        assertEquals(2 + 1, e.written(2, 2));
        assertEquals(5, e.written(9, 5));
        assertEquals(4, e.insertedTotal);
    }

    /** A loop record of 40 steps of a two-block cycle with no call: 3 words for 40 events. */
    private static final int[] LOOP = {EventLayout.loopSteps(40, 1), BLOCK, EventLayout.loopCycle(3)};
    private static final int LOOP_EXTRA = 40 - 3;

    @Test
    void loopRecordsBeforeAPositionCountWhetherTheThreadToldThemOrNot() throws Exception {
        // Stored: a marked start, a loop record, a block, an end (positions 0..5); a second record
        // after them. The thread counted both records (37 + 37 events beyond their words).
        int[] chunk = new int[16];
        int n = 0;
        chunk[n++] = MARKED;
        for (int w : LOOP) {
            chunk[n++] = w;
        }
        chunk[n++] = BLOCK;
        chunk[n++] = END;                     // position 6: after the first record
        for (int w : LOOP) {
            chunk[n++] = w;
        }
        chunk[n++] = END;                     // n = 10
        for (long told : new long[] {EntryBlocks.UNKNOWN, LOOP_EXTRA}) {
            EntryBlocks e = new EntryBlocks();
            ClockRecords ready = new ClockRecords();
            e.clock(1, 6, 100, EventLayout.CLOCK_FLAG_EXACT, told, ready);
            // the chunk's end, as the next buffer's first sample would say (nothing of its own yet)
            e.clock(1, n, 110, EventLayout.CLOCK_FLAG_EXACT, 0, ready);
            e.clock(1, 1, 90, EventLayout.CLOCK_FLAG_EXACT, told == EntryBlocks.UNKNOWN ? told : 0, ready);
            e.count(1, chunk, n, 0, 2 * LOOP.length, 2 * (LOOP_EXTRA + LOOP.length), ready);
            assertEquals(n + 1 + 2 * LOOP_EXTRA, e.events);
            assertEquals(1, e.marked);
            // position 1: after the marked start; 6: after it and the first record; the end: everything
            assertArrayEquals(new long[] {1 + 1, 6 + 1 + LOOP_EXTRA, n + 1 + 2 * LOOP_EXTRA}, positions(ready),
                    "told " + told);
        }
    }

    @Test
    void recordsOfAChunkThatNeverCameAreDrained() throws Exception {
        EntryBlocks e = new EntryBlocks();
        ClockRecords ready = new ClockRecords();
        int[] chunk = {MARKED, END};
        e.count(70, chunk, chunk.length, 0, 0, 0, ready);   // beyond the first table of streams
        e.clock(70, 50, 1, EventLayout.CLOCK_FLAG_EXACT, EntryBlocks.UNKNOWN, ready);
        e.clock(70, 40, 2, EventLayout.CLOCK_FLAG_EXACT, EntryBlocks.UNKNOWN, ready);
        assertEquals(0, ready.size());
        e.drain(ready);
        assertArrayEquals(new long[] {51, 41}, positions(ready));
    }
}
