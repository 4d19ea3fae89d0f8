package jbgui.runtime;

/**
 * The on-disk constants of the trace format (docs/trace-format.md). The Python side defines the
 * same names in jbgui/model/layout.py; tests/agent/test_layout_constants.py checks they agree.
 */
public final class EventLayout {
    private EventLayout() {}

    public static final int FORMAT_VERSION = 4;

    // Event word: 2-bit type | 19-bit method id | 11-bit block index (JBInsTrace, Figure 2).
    public static final int TYPE_SHIFT = 30;
    public static final int METHOD_SHIFT = 11;
    public static final int METHOD_BITS = 19;
    public static final int BLOCK_BITS = 11;
    public static final int TYPE_EXTENDED = 0;
    public static final int TYPE_METHOD_START = 1;
    public static final int TYPE_METHOD_END = 2;
    public static final int TYPE_BLOCK = 3;

    // Extended words (type 0): 3-bit subtype | 27-bit value.
    public static final int SUBTYPE_SHIFT = 27;
    public static final int VALUE_MASK = (1 << SUBTYPE_SHIFT) - 1;
    public static final int EXT_CLASS_LOAD = 0;
    public static final int EXT_RECEIVER = 1;
    public static final int EXT_EXCEPTION_EXIT = 2;
    public static final int EXT_THREAD_SWITCH = 3;
    public static final int EXT_THROWABLE = 4;
    /**
     * A loop record (format version 3, jbgui.instr.LoopCycles): three words that stand for the
     * block events of a loop's steps. {@code extended(EXT_LOOP, back << LOOP_STEPS_BITS | steps)},
     * the header's block word, {@code extended(EXT_LOOP, LOOP_CYCLE_FLAG | mask)}: the loop ran
     * {@code steps} blocks of its cycle from the header on, the cycle being the blocks
     * {@code lo + k} (lo = header - back) for the bits k of mask, ascending, rotated to start at
     * the header. Only in payloads with FILTER_LOOPS, which readers expand.
     */
    public static final int EXT_LOOP = 5;
    /**
     * The optional fourth word of a loop record: {@code extended(EXT_LOOP_CALL, k << METHOD_BITS |
     * id)}. Each step of the cycle's block lo + k is followed by a call of the static leaf method
     * {@code id}: its start, its block 0 and its end (three events).
     */
    public static final int EXT_LOOP_CALL = 6;
    /**
     * The optional fifth word of a loop record with a call (format version 4): {@code
     * extended(EXT_LOOP_CALL, LOOP_PATH_FLAG | path)}. Each call of the leaf runs the blocks j of
     * the path's bits, ascending (the leaf has no backward jump): its start, those blocks, its end.
     * Without it, a call runs block 0 only. Bit 0 is always set.
     */
    public static final int LOOP_PATH_FLAG = 1 << 26;
    /**
     * The recorder's runtime passes a record's call as one int (Tracer.loopHead's {@code call}):
     * the cycle's block k in the low bits, the leaf's path above this shift (0: a one-block leaf).
     */
    public static final int LOOP_CALL_PATH_SHIFT = 5;
    public static final int LOOP_STEPS_BITS = 20;
    public static final int LOOP_STEPS_MAX = (1 << LOOP_STEPS_BITS) - 1;
    public static final int LOOP_CYCLE_FLAG = 1 << 26;
    public static final int LOOP_SPAN_MAX = 26;
    /**
     * A thread hands its buffer over once its loop records stand for this many events, so that a
     * chunk never stands for more than BUFFER_MAX_EVENTS + 2 * LOOP_REPRESENTED_MAX events (readers
     * refuse chunks of over 4 M).
     */
    public static final int LOOP_REPRESENTED_MAX = 1 << 20;

    public static final int MAX_METHOD_ID = (1 << METHOD_BITS) - 1;
    public static final int BLOCKS_PER_PAGE = 1 << BLOCK_BITS;
    public static final int MAX_CLASS_ID = VALUE_MASK;

    // Stream files.
    public static final int STREAM_HEADER_SIZE = 32;
    public static final int CHUNK_HEADER_SIZE = 32;
    public static final int STREAM_KIND_THREAD = 0;
    public static final int STREAM_KIND_SHARED = 1;
    public static final int CODEC_NONE = 0;
    public static final int CODEC_ZLIB = 1;
    public static final int CODEC_ZSTD = 2;
    public static final int FILTER_NONE = 0;
    public static final int FILTER_BYTE_PLANES = 1;
    /**
     * A bit of the filter byte: the payload holds start words marked START_ENTRY_IMPLIED, each of
     * which the reader replaces with the start word and its method's first block word (after the
     * receiver word, where one follows); the chunk's event count counts the words after that.
     */
    public static final int FILTER_ENTRY_BLOCKS = 2;
    /** A bit of the filter byte: the payload holds loop records (EXT_LOOP), which readers expand. */
    public static final int FILTER_LOOPS = 4;
    public static final int CHUNK_FLAG_LAST = 1;
    public static final int CHUNK_FLAG_FINAL_FLUSH = 2;
    public static final int CHUNK_FLAG_LOST_BEFORE = 4;

    // Clock samples.
    public static final int CLOCK_HEADER_SIZE = 16;
    public static final int CLOCK_RECORD_SIZE = 32;
    public static final int CLOCK_FLAG_EXACT = 1;
    /** Taken by the thread itself around a call that may block (with EXACT). */
    public static final int CLOCK_FLAG_BLOCKING = 2;
    /** With BLOCKING: taken when the call returned (else: just before the call). */
    public static final int CLOCK_FLAG_AFTER = 4;

    // Per-thread buffers grow from the minimum to the maximum as a thread records more. A full
    // buffer is one chunk, so the maximum is also what the writer compresses at once: 262,144
    // words (1 MiB) rather than 65,536 made level=method javac 0.90-0.93 of the wall time (paired
    // whole runs, three sets of 5-6 pairs; docs/recorder-cost.md), its writer's encoding
    // 1.41 s instead of 1.76 and its events 74 MB instead of 112: zstd finds more of a thread's
    // repeated sequences in a longer chunk, and each chunk has its own setup, header, CRC, write
    // and hand-over. A busy thread's clock is still sampled every 65,536 events
    // (ThreadTrace.SAMPLE_EVENTS); a killed JVM loses up to a buffer's events per thread.
    public static final int BUFFER_MIN_EVENTS = 1024;
    public static final int BUFFER_MAX_EVENTS = 262144;
    /**
     * Most block probes do not test for a full buffer (ThreadTrace.putUnchecked): a thread's buffer
     * is handed over once it holds {@code length - BUFFER_SLACK_EVENTS} events, tested only by the
     * method-entry, method-exit and exception-exit probes and by the blocks of
     * jbgui.instr.ProbeInserter's checked kind (loop heads, handlers, all blocks of a method with
     * more than {@link #UNCHECKED_RUN_MAX} blocks). Between two tests a thread runs one frame's
     * blocks along a path without a cycle, at most UNCHECKED_RUN_MAX of them, which the slack holds.
     */
    public static final int BUFFER_SLACK_EVENTS = 512;
    public static final int UNCHECKED_RUN_MAX = 256;

    /**
     * Set in a start word by the entry probe of a method whose first block has no probe
     * (jbgui.instr.BlockElision). It stays in the chunk's payload (FILTER_ENTRY_BLOCKS); readers
     * put that block's word after the start's (and after the receiver's, where there is one) and
     * clear the flag, so the events they see are those a probe in the block would have recorded.
     * A start word's block bits are otherwise 0.
     */
    public static final int START_ENTRY_IMPLIED = 1;

    /**
     * Set in an instance method's start word, which then has no receiver word after it, when the
     * receiver's class is the method's own (jbgui.runtime.Tracer.enterInstance): readers take the
     * method's class from static.xml. On javac it spares half of the receiver words and the
     * program's thread their class lookups. Readers keep it (it is not an event of its own) and
     * mask it out of the start word like START_ENTRY_IMPLIED.
     */
    public static final int START_RECEIVER_OWN = 2;

    public static int methodStart(int methodId) {
        return (TYPE_METHOD_START << TYPE_SHIFT) | (methodId << METHOD_SHIFT);
    }

    public static int methodEnd(int methodId) {
        return (TYPE_METHOD_END << TYPE_SHIFT) | (methodId << METHOD_SHIFT);
    }

    public static int block(int pageMethodId, int indexInPage) {
        return (TYPE_BLOCK << TYPE_SHIFT) | (pageMethodId << METHOD_SHIFT) | indexInPage;
    }

    // Probes carry only the method's start word (a single constant per method in the class's pool);
    // the other words of the method follow from it. Block pages continue the method's id
    // (block(id + b / BLOCKS_PER_PAGE, b % BLOCKS_PER_PAGE) == block(id, 0) + b), so the word of the
    // method's block b (counted over all its pages) is start + BLOCK_FROM_START + b, and its end
    // word start + END_FROM_START. Constants, not methods: the probes add them where they run, so
    // interpreted code makes no extra call per block.
    public static final int BLOCK_FROM_START = (TYPE_BLOCK - TYPE_METHOD_START) << TYPE_SHIFT;
    public static final int END_FROM_START = (TYPE_METHOD_END - TYPE_METHOD_START) << TYPE_SHIFT;

    /** The exception-exit word of the method whose start word is {@code start}. */
    public static int exceptionExitFromStart(int start) {
        return (EXT_EXCEPTION_EXIT << SUBTYPE_SHIFT) | ((start >>> METHOD_SHIFT) & MAX_METHOD_ID);
    }

    /** The first word of a loop record: {@code steps} steps of the cycle, whose header is {@code back} above its lowest block. */
    public static int loopSteps(int steps, int back) {
        return extended(EXT_LOOP, (back << LOOP_STEPS_BITS) | steps);
    }

    /** The third word of a loop record: the cycle's blocks as a mask over its span. */
    public static int loopCycle(int mask) {
        return extended(EXT_LOOP, LOOP_CYCLE_FLAG | mask);
    }

    /**
     * The fourth word of a loop record whose block lo + k calls the leaf with start word {@code
     * leaf}; {@code call}: k, and the leaf's path above LOOP_CALL_PATH_SHIFT.
     */
    public static int loopCall(int call, int leaf) {
        int k = call & ((1 << LOOP_CALL_PATH_SHIFT) - 1);
        return extended(EXT_LOOP_CALL, (k << METHOD_BITS) | ((leaf >>> METHOD_SHIFT) & MAX_METHOD_ID));
    }

    /** Whether {@code w} is a loop record's fifth word, its path ({@link #loopPath}). */
    public static boolean isLoopPath(int w) {
        return (w >>> SUBTYPE_SHIFT) == EXT_LOOP_CALL && (w & LOOP_PATH_FLAG) != 0;   // type 0, the subtype
    }

    /** The fifth word of a loop record whose {@code call} has a path (0 when it has none: four words). */
    public static int loopPath(int call) {
        int path = call >>> LOOP_CALL_PATH_SHIFT;
        return path == 0 ? 0 : extended(EXT_LOOP_CALL, LOOP_PATH_FLAG | path);
    }

    /**
     * The events a loop record stands for: its steps, and for each step of the block with a leaf's
     * call that call's events: three (start, block 0, end), or with a path its start, its blocks
     * and its end.
     */
    public static int loopEvents(int steps, int back, int mask, int call, int leaf) {
        if (leaf == 0) {
            return steps;
        }
        int k = call & ((1 << LOOP_CALL_PATH_SHIFT) - 1);
        int path = call >>> LOOP_CALL_PATH_SHIFT;
        int length = Integer.bitCount(mask);
        int above = mask & -(1 << back);            // the cycle from the header on, in order
        int position = k >= back
                ? Integer.bitCount(above & ((1 << k) - 1))
                : Integer.bitCount(above) + Integer.bitCount(mask & ((1 << k) - 1));
        int calls = steps / length + (steps % length > position ? 1 : 0);
        return steps + (path == 0 ? 3 : 2 + Integer.bitCount(path)) * calls;
    }

    public static int extended(int subtype, int value) {
        return (subtype << SUBTYPE_SHIFT) | (value & VALUE_MASK);
    }
}
