package jbgui.runtime;


/**
 * Mode 1: one stream for all threads, in the global order the events happened (the seed's
 * "unique, shared trace"). Every event takes a lock, so this mode is much slower than mode 2;
 * a THREAD_SWITCH word marks where the recording thread changes.
 */
final class SharedStream {
    private SharedStream() {}

    private static final Object LOCK = new Object();
    private static int[] buf = new int[EventLayout.BUFFER_MAX_EVENTS];
    private static int pos;
    private static long base;
    private static int lastThread;
    private static boolean closed;

    static void put(ThreadTrace t, int event) {
        synchronized (LOCK) {
            if (lastThread != t.index) {
                append(t, EventLayout.extended(EventLayout.EXT_THREAD_SWITCH, t.index));
                lastThread = t.index;
            }
            append(t, event);
        }
    }

    static void put2(ThreadTrace t, int first, int second) {
        synchronized (LOCK) {
            if (lastThread != t.index) {
                append(t, EventLayout.extended(EventLayout.EXT_THREAD_SWITCH, t.index));
                lastThread = t.index;
            }
            append(t, first);
            append(t, second);
        }
    }

    private static void append(ThreadTrace t, int event) {
        buf[pos++] = event;
        if (pos == buf.length) {
            t.guard++;
            // A virtual thread must not leave its carrier while it holds the lock (CarrierPin).
            boolean pinned = t.virtual && CarrierPin.hold();
            try {
                flushLocked(0);
            } finally {
                if (pinned) {
                    CarrierPin.release();
                }
                t.guard--;
            }
        }
    }

    private static void flushLocked(int flags) {
        if (closed || pos == 0) {
            pos = 0;
            return;
        }
        try {
            TraceSink.current().submitEvents(0, buf, pos, base, flags, true, 0, 0);
            buf = TraceSink.current().takeBuffer(EventLayout.BUFFER_MAX_EVENTS);
        } catch (Throwable e) {
            // Lost: the next chunk's first index shows the gap.
        }
        base += pos;
        pos = 0;
    }

    /** Events recorded so far in the shared stream. */
    static long position() {
        return base + pos;
    }

    /** The final flush, by the writer. */
    static void finish() {
        synchronized (LOCK) {
            flushLocked(EventLayout.CHUNK_FLAG_FINAL_FLUSH | EventLayout.CHUNK_FLAG_LAST);
            closed = true;
        }
    }
}
