package jbgui.output;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jbgui.runtime.EventLayout;

/**
 * Writes the first-block events that entry probes left to the writer (jbgui.instr.BlockElision):
 * a start word with {@link EventLayout#START_ENTRY_IMPLIED} becomes the start word, its receiver
 * word if one follows, then the method's first block word. The program's thread stores one word
 * fewer per call; the trace on disk is the one a probe in the first block would have written.
 *
 * <p>Positions (event indices in a thread's stream) on disk count the written words, so the writer
 * maps the positions the program's threads report (clock samples, chunk starts, a thread's event
 * count) from what was stored to what is written: a position moves up by the number of words
 * inserted before it. A thread reports a sample's position before the chunk holding that position
 * reaches the writer, so such a sample waits here until that chunk is written. Only the writer
 * thread calls this class.
 */
final class EntryBlocks {
    private static final int FLAGGED_START_MASK = (3 << EventLayout.TYPE_SHIFT) | EventLayout.START_ENTRY_IMPLIED;
    private static final int FLAGGED_START = (EventLayout.TYPE_METHOD_START << EventLayout.TYPE_SHIFT)
            | EventLayout.START_ENTRY_IMPLIED;
    private static final int RECEIVER_MASK = (3 << EventLayout.TYPE_SHIFT) | (7 << EventLayout.SUBTYPE_SHIFT);
    private static final int RECEIVER = EventLayout.EXT_RECEIVER << EventLayout.SUBTYPE_SHIFT;

    /** One thread's stream: how far it has been written and what waits for its next chunk. */
    private static final class Stream {
        long storedEnd;          // stored events written so far (the next chunk's first, unless some were lost)
        long inserted;           // words inserted before storedEnd
        final List<long[]> waiting = new ArrayList<>();   // clock records beyond storedEnd, in arrival order
    }

    private final Map<Integer, Stream> streams = new HashMap<>();
    private int[] out = new int[2 * EventLayout.BUFFER_MAX_EVENTS];
    /** The expanded chunk of the last {@link #expand}: words and count. */
    int[] words;
    int count;
    /** Its first event, as written. */
    long first;
    /** First-block words written for the probes, over all streams. */
    long insertedTotal;

    /**
     * Expands a chunk of stored events of a stream that starts at stored position {@code storedFirst};
     * the result is in {@link #words}, {@link #count} and {@link #first} (the input array itself
     * when nothing was inserted). Clock records waiting for positions in it are added to {@code ready}.
     */
    void expand(int stream, int[] in, int n, long storedFirst, List<long[]> ready) {
        Stream s = stream(stream);
        long base = s.inserted;
        first = storedFirst + base;
        int i = 0;
        while (i < n && (in[i] & FLAGGED_START_MASK) != FLAGGED_START) {
            i++;
        }
        if (i == n) {
            words = in;
            count = n;
        } else {
            if (out.length < 2 * n) {
                out = new int[2 * n];
            }
            System.arraycopy(in, 0, out, 0, i);
            int j = i;
            for (; i < n; i++) {
                int w = in[i];
                if ((w & FLAGGED_START_MASK) != FLAGGED_START) {
                    out[j++] = w;
                    continue;
                }
                int start = w & ~EventLayout.START_ENTRY_IMPLIED;
                out[j++] = start;
                if (i + 1 < n && (in[i + 1] & RECEIVER_MASK) == RECEIVER) {
                    out[j++] = in[++i];
                }
                out[j++] = start + EventLayout.BLOCK_FROM_START;
            }
            words = out;
            count = j;
        }
        long storedEnd = storedFirst + n;
        if (!s.waiting.isEmpty()) {
            place(s, in, n, storedFirst, storedEnd, base, ready);
        }
        s.inserted = base + (count - n);
        insertedTotal += count - n;
        s.storedEnd = storedEnd;
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
