package jbgui.runtime;

/**
 * Where the runtime hands what it records: full event buffers, clock samples taken around blocking
 * calls, threads, loaders and classes seen late, log lines. The output side
 * ({@code jbgui.output.TraceWriter}) implements it and installs itself with {@link #install} when
 * a recording starts, so the runtime — loaded on the boot path, called by every probe — depends on
 * no writer, and the writer on the runtime only.
 *
 * <p>None of these is on a probe's fast path: a buffer is handed over once per tens of thousands
 * of events, a blocking sample once per blocking call.
 */
public interface TraceSink {
    /** An empty buffer of at least {@code size} events (recycled ones first). */
    int[] takeBuffer(int size);

    /**
     * {@code count} event words of stream {@code stream}, the first at index {@code first};
     * {@code recordWords} of them are loop records, which stand for {@code represented} events.
     */
    void submitEvents(int stream, int[] words, int count, long first, int flags, boolean recycle, int recordWords,
                      int represented);

    /** A thread was registered: describe it in the thread table. */
    void threadStarted(ThreadTrace trace, Thread thread);

    void loaderSeen(int id, String description);

    void classSeenLate(int id, String name, int loaderId, String loader, boolean hidden, boolean array);

    void log(String message);

    /**
     * An exact clock sample of stream {@code stream} at event {@code position}. {@code loopExtra}:
     * the events the loop records stored before it in the thread's current buffer stand for beyond
     * their words (ThreadTrace.loopExtra), which the writer would otherwise count from the words.
     */
    void blockingSample(int stream, long position, long nanos, boolean after, int loopExtra);

    /** An exact clock sample of stream {@code stream} at event {@code position}, taken by the thread itself (see {@link #blockingSample}). */
    void exactSample(int stream, long position, long nanos, int loopExtra);

    /** The sink the runtime uses; one that keeps nothing until a recording starts. */
    static TraceSink current() {
        return Holder.sink;
    }

    /** Installs the recording's sink (the output side, when it starts). */
    static void install(TraceSink sink) {
        Holder.sink = sink;
    }

    /** The installed sink (an interface cannot hold a mutable field itself). */
    final class Holder {
        private Holder() {}

        private static volatile TraceSink sink = new Discard();
    }

    /** Before a recording starts: buffers are handed out, nothing is kept. */
    final class Discard implements TraceSink {
        @Override public int[] takeBuffer(int size) { return new int[size]; }
        @Override public void submitEvents(int stream, int[] words, int count, long first, int flags, boolean recycle,
                                           int recordWords, int represented) {}
        @Override public void threadStarted(ThreadTrace trace, Thread thread) {}
        @Override public void loaderSeen(int id, String description) {}
        @Override public void classSeenLate(int id, String name, int loaderId, String loader, boolean hidden,
                                            boolean array) {}
        @Override public void log(String message) {}
        @Override public void blockingSample(int stream, long position, long nanos, boolean after, int loopExtra) {}
        @Override public void exactSample(int stream, long position, long nanos, int loopExtra) {}
    }
}
