package jbgui.output;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jbgui.runtime.EventLayout;

/**
 * Accounts for the first-block events that entry probes left out (jbgui.instr.BlockElision): a
 * start word marked {@link EventLayout#START_ENTRY_IMPLIED} stands for two events, the start and
 * its method's first block (after the receiver word, where one follows). The writer stores the
 * words as they are, and marks the chunk (EventLayout.FILTER_ENTRY_BLOCKS) with the count of the
 * events they stand for; readers write the block words in (jbgui/model/format/entry_blocks.py).
 * Copying every chunk to insert them here made the writer the bottleneck of a compute-heavy
 * program (the threads waited for it 19,365 times, 1.5 s, in the kernel benchmark), and
 * compressing fewer words is cheaper.
 *
 * <p>Positions (event indices in a thread's stream) on disk count events, so the writer maps the
 * positions the program's threads report (clock samples, chunk starts, a thread's event count)
 * from stored words to events: a position moves up by the number of marked starts before it. A
 * thread reports a sample's position before the chunk holding that position reaches the writer,
 * so such a sample waits here until that chunk is written. Only the writer thread calls this class.
 */
final class EntryBlocks {
    private static final int FLAGGED_START_MASK = (3 << EventLayout.TYPE_SHIFT) | EventLayout.START_ENTRY_IMPLIED;
    private static final int FLAGGED_START = (EventLayout.TYPE_METHOD_START << EventLayout.TYPE_SHIFT)
            | EventLayout.START_ENTRY_IMPLIED;

    /** One thread's stream: how far it has been written and what waits for its next chunk. */
    private static final class Stream {
        long storedEnd;          // stored events written so far (the next chunk's first, unless some were lost)
        long inserted;           // words inserted before storedEnd
        final List<long[]> waiting = new ArrayList<>();   // clock records beyond storedEnd, in arrival order
    }

    private final Map<Integer, Stream> streams = new HashMap<>();
    /** The last chunk counted: the events its words stand for, and its first event. */
    int events;
    long first;
    /** First blocks implied by marked starts, over all streams. */
    long insertedTotal;

    /**
     * Counts a chunk of {@code n} stored words of a stream that starts at stored position
     * {@code storedFirst}: sets {@link #events} and {@link #first}. Clock records waiting for
     * positions in it are added to {@code ready}, mapped.
     */
    void count(int stream, int[] in, int n, long storedFirst, List<long[]> ready) {
        Stream s = stream(stream);
        long base = s.inserted;
        first = storedFirst + base;
        int k = 0;
        for (int i = 0; i < n; i++) {
            if ((in[i] & FLAGGED_START_MASK) == FLAGGED_START) {
                k++;
            }
        }
        events = n + k;
        long storedEnd = storedFirst + n;
        if (!s.waiting.isEmpty()) {
            place(s, in, n, storedFirst, storedEnd, base, ready);
        }
        s.inserted = base + k;
        s.storedEnd = storedEnd;
        insertedTotal += k;
    }

    private Stream stream(int stream) {
        Stream s = streams.get(stream);
        if (s == null) {
            s = new Stream();
            streams.put(stream, s);
        }
        return s;
    }

    /** Insertion sort (no lambdas in the engine: see tests/agent/test_no_invokedynamic.py); the records mostly come in order. */
    private static void sortByPosition(List<long[]> records) {
        for (int i = 1; i < records.size(); i++) {
            long[] r = records.get(i);
            int j = i - 1;
            while (j >= 0 && records.get(j)[1] > r[1]) {
                records.set(j + 1, records.get(j));
                j--;
            }
            records.set(j + 1, r);
        }
    }

    /** Moves the records waiting for positions up to {@code storedEnd} to {@code ready}, mapped. */
    private static void place(Stream s, int[] in, int n, long storedFirst, long storedEnd, long base, List<long[]> ready) {
        List<long[]> later = new ArrayList<>();
        List<long[]> due = new ArrayList<>();
        for (long[] r : s.waiting) {
            (r[1] <= storedEnd ? due : later).add(r);
        }
        sortByPosition(due);
        int i = 0;
        long added = 0;
        for (long[] r : due) {
            int upTo = (int) Math.max(0, Math.min(n, r[1] - storedFirst));
            for (; i < upTo; i++) {
                if ((in[i] & FLAGGED_START_MASK) == FLAGGED_START) {
                    added++;
                }
            }
            r[1] += base + added;
            ready.add(r);
        }
        s.waiting.clear();
        s.waiting.addAll(later);
    }

    /**
     * Maps a clock record's position (record[1]) of a thread's stream: at once when its chunk is
     * written already (the record goes to {@code ready}), else when that chunk comes.
     */
    void clock(long[] record, List<long[]> ready) {
        Stream s = stream((int) record[0]);
        if (record[1] > s.storedEnd) {
            s.waiting.add(record);
        } else {
            // At the written end (the usual case), or a sampler's racy earlier position: the words
            // inserted so far are the best estimate there is.
            record[1] += s.inserted;
            ready.add(record);
        }
    }

    /** A stored position of a stream, as written, for what comes after every chunk was written (a thread's end). */
    long written(int stream, long stored) {
        Stream s = streams.get(stream);
        return s == null ? stored : stored + s.inserted;
    }

    /** The records still waiting (for chunks that never came: the trace was cut), mapped as well as can be. */
    void drain(List<long[]> ready) {
        for (Stream s : streams.values()) {
            for (long[] r : s.waiting) {
                r[1] += s.inserted;
                ready.add(r);
            }
            s.waiting.clear();
        }
    }
}
