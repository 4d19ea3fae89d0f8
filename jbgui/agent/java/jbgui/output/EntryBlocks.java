package jbgui.output;

import jbgui.runtime.Config;
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
        final ClockRecords waiting = new ClockRecords();   // clock records beyond storedEnd, in arrival order
    }

    /** By stream index (threads are numbered from 1, densely); grown as threads come. */
    private Stream[] streams = new Stream[64];
    private final ClockRecords due = new ClockRecords();
    private final ClockRecords later = new ClockRecords();
    /** The last chunk counted: the events its words stand for, and its first event. */
    int events;
    long first;
    /** First blocks implied by marked starts, over all streams. */
    long insertedTotal;
    /** The last chunk counted: its marked starts and its loop records' words (its filter bits). */
    int marked;
    int loopWords;
    /** Loop records' words over all streams, and the events they stand for. */
    long loopWordsTotal;
    long loopEventsTotal;

    /**
     * Counts a chunk of {@code n} stored words of a stream that starts at stored position
     * {@code storedFirst}: sets {@link #events} and {@link #first}. Clock records waiting for
     * positions in it are added to {@code ready}, mapped.
     */
    void count(int stream, int[] in, int n, long storedFirst, int recordWords, int loopEvents, ClockRecords ready) {
        Stream s = stream(stream);
        long base = s.inserted;
        first = storedFirst + base;
        // The thread counted its loop records' words and their events (ThreadTrace.putLoop).
        long extra = (long) loopEvents - recordWords;
        long storedEnd = storedFirst + n;
        // One pass over the words: with clock records waiting, the marked starts are counted in
        // the pieces between their positions.
        int k = s.waiting.isEmpty() ? flagged(in, 0, n) : place(s, in, n, storedFirst, storedEnd, base, extra, ready);
        loopWords = recordWords;
        loopWordsTotal += recordWords;
        loopEventsTotal += loopEvents;
        marked = k;
        events = (int) (n + k + extra);
        s.inserted = base + k + extra;
        s.storedEnd = storedEnd;
        insertedTotal += k;
    }

    private static final int LOOP_STEPS_MASK = (3 << EventLayout.TYPE_SHIFT) | (7 << EventLayout.SUBTYPE_SHIFT)
            | EventLayout.LOOP_CYCLE_FLAG;
    private static final int LOOP_STEPS_WORD = EventLayout.EXT_LOOP << EventLayout.SUBTYPE_SHIFT;

    private static final int LOOP_CALL_MASK = (3 << EventLayout.TYPE_SHIFT) | (7 << EventLayout.SUBTYPE_SHIFT);
    private static final int LOOP_CALL_WORD = EventLayout.EXT_LOOP_CALL << EventLayout.SUBTYPE_SHIFT;

    /** A clock record's {@code loopExtra} when its thread did not say (ClockSampler's, a thread's end). */
    static final int UNKNOWN = Integer.MIN_VALUE;

    /**
     * The events the loop records that begin among {@code in[from, to)} stand for beyond their
     * words (jbgui.instr.LoopCycles); negative for records of fewer steps than words. Only for
     * clock records inside a chunk whose thread did not say ({@link #place}): a chunk's total
     * comes from its thread, which counted its records (ThreadTrace.putLoop), and so does a
     * sample's it took itself (ThreadTrace.loopExtra). Read for each sample, this scan of every
     * word before it, with the marked starts counted a second time, was 3% of a traced jEdit
     * start-up's CPU (perf, JDK 17), most of the writer's own.
     */
    static long loopExtra(int[] in, int from, int to) {
        long extra = 0;
        for (int i = from; i < to; i++) {
            int w = in[i];
            if ((w & LOOP_STEPS_MASK) != LOOP_STEPS_WORD || i + 2 >= in.length) {
                continue;
            }
            int steps = w & EventLayout.LOOP_STEPS_MAX;
            int back = (w >>> EventLayout.LOOP_STEPS_BITS) & 63;
            int mask = in[i + 2] & (EventLayout.LOOP_CYCLE_FLAG - 1);
            boolean call = i + 3 < in.length && (in[i + 3] & LOOP_CALL_MASK) == LOOP_CALL_WORD;
            int k = call ? (in[i + 3] & EventLayout.VALUE_MASK) >>> EventLayout.METHOD_BITS : 0;
            int words = call ? 4 : 3;
            if (call && i + 4 < in.length && EventLayout.isLoopPath(in[i + 4])) {
                k |= (in[i + 4] & (EventLayout.LOOP_PATH_FLAG - 1)) << EventLayout.LOOP_CALL_PATH_SHIFT;
                words = 5;
            }
            extra += EventLayout.loopEvents(steps, back, mask, k, call ? 1 : 0) - words;
        }
        return extra;
    }

    /**
     * The marked starts among {@code in[from, to)}. Without a branch, so that C2 vectorizes the
     * loop: it reads every word the program records (0.31 against 0.59 ns a word with a branch,
     * measured on words like a trace's).
     */
    static int flagged(int[] in, int from, int to) {
        if (!Config.entryMarks) {
            // No probe marks a start (level=method, mode 1, elide=off): the scan would read every
            // word for nothing, 0.3 s of the writer's CPU on level=method javac's 870 M events.
            return 0;
        }
        int other = 0;
        for (int i = from; i < to; i++) {
            int x = (in[i] & FLAGGED_START_MASK) ^ FLAGGED_START;
            other += (x | -x) >>> 31; // 1 unless x == 0
        }
        return to - from - other;
    }

    private Stream stream(int stream) {
        if (stream >= streams.length) {
            streams = java.util.Arrays.copyOf(streams, Math.max(streams.length * 2, stream + 1));
        }
        Stream s = streams[stream];
        if (s == null) {
            s = new Stream();
            streams[stream] = s;
        }
        return s;
    }

    /**
     * Moves the records waiting for positions up to {@code storedEnd} to {@code ready}, mapped,
     * and returns the chunk's marked starts ({@code extra}: its loop records' events beyond their
     * words).
     */
    private int place(Stream s, int[] in, int n, long storedFirst, long storedEnd, long base, long extra,
                      ClockRecords ready) {
        due.clear();
        later.clear();
        ClockRecords w = s.waiting;
        for (int j = 0; j < w.size(); j++) {
            (w.position(j) <= storedEnd ? due : later).addFrom(w, j, 0);
        }
        due.sortByPosition();
        int i = 0;
        int marks = 0;
        int scannedTo = 0;
        long scanned = 0;
        for (int j = 0; j < due.size(); j++) {
            int upTo = (int) Math.max(0, Math.min(n, due.position(j) - storedFirst));
            if (upTo > i) {
                marks += flagged(in, i, upTo);
                i = upTo;
            }
            long loops;
            long told = due.loopExtra(j);
            if (!Config.loopRecords || upTo == 0) {
                loops = 0;
            } else if (upTo == n) {
                loops = extra;  // every record of the chunk is before it (it may be the next buffer's first sample)
            } else if (told != UNKNOWN) {
                loops = told;   // taken inside this buffer by its thread, which counted its records
            } else {
                scanned += loopExtra(in, scannedTo, upTo);
                scannedTo = upTo;
                loops = scanned;
            }
            ready.addFrom(due, j, base + marks + loops);
        }
        w.clear();
        for (int j = 0; j < later.size(); j++) {
            w.addFrom(later, j, 0);
        }
        return marks + flagged(in, i, n);
    }

    /**
     * Maps a clock record's position of a thread's stream: at once when its chunk is written
     * already (the record goes to {@code ready}), else when that chunk comes. {@code loopExtra}:
     * what the loop records before the position in its thread's buffer stand for beyond their
     * words, when the thread took the sample there itself (ThreadTrace.loopExtra); else UNKNOWN,
     * and the words are read. A sample taken inside a leaf written in place whose exception then
     * takes its events back (ThreadTrace.retract) is off either way, by those events.
     */
    void clock(long stream, long position, long nanos, long flags, long loopExtra, ClockRecords ready) {
        Stream s = stream((int) stream);
        if (position > s.storedEnd) {
            s.waiting.add(stream, position, nanos, flags, loopExtra);
        } else {
            // At the written end (the usual case), or a sampler's racy earlier position: the words
            // inserted so far are the best estimate there is.
            ready.add(stream, position + s.inserted, nanos, flags);
        }
    }

    /** A stored position of a stream, as written, for what comes after every chunk was written (a thread's end). */
    long written(int stream, long stored) {
        Stream s = stream >= 0 && stream < streams.length ? streams[stream] : null;
        return s == null ? stored : stored + s.inserted;
    }

    /** The records still waiting (for chunks that never came: the trace was cut), mapped as well as can be. */
    void drain(ClockRecords ready) {
        for (Stream s : streams) {
            if (s == null) {
                continue;
            }
            for (int j = 0; j < s.waiting.size(); j++) {
                ready.addFrom(s.waiting, j, s.inserted);
            }
            s.waiting.clear();
        }
    }
}
