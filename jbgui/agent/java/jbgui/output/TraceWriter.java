package jbgui.output;

import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;

import jbgui.runtime.EventLayout;
import jbgui.runtime.ThreadRegistry;
import jbgui.runtime.ThreadTrace;
import jbgui.runtime.TraceSink;
import jbgui.runtime.Tracer;

/**
 * The background writer: owns every file of the trace directory. Recording threads hand it full
 * buffers ({@link #submitEvents}); it compresses them into chunks (docs/trace-format.md) and
 * appends them to the thread's stream file, so the trace reaches the disk while the program runs
 * and memory stays bounded: a recording thread waits when {@code Config.maxBufferedBytes} of
 * buffers are queued. It also appends static.xml, threads.jsonl, clock.bin and agent.log, and
 * finishes the streams of threads that have died.
 */
public final class TraceWriter implements Runnable {
    private TraceWriter() {}

    private static final class Events {
        final int stream;
        final int[] words;
        final int count;
        final long first;
        final int flags;
        final boolean recycle;
        final long nanos;
        /** Words of loop records among {@code words}, and the events they stand for (ThreadTrace.putLoop). */
        final int recordWords;
        final int represented;

        Events(int stream, int[] words, int count, long first, int flags, boolean recycle, long nanos, int recordWords,
               int represented) {
            this.recordWords = recordWords;
            this.represented = represented;
            this.stream = stream;
            this.words = words;
            this.count = count;
            this.first = first;
            this.flags = flags;
            this.recycle = recycle;
            this.nanos = nanos;
        }
    }

    private static final class Text {
        final int file;
        final Object text;

        Text(int file, Object text) {
            this.file = file;
            this.text = text;
        }
    }

    private static final class Clock {
        final long[] records;
        final int count;
        /** For one record its thread took: EntryBlocks.clock's {@code loopExtra}; else EntryBlocks.UNKNOWN. */
        final int loopExtra;

        Clock(long[] records, int count) {
            this(records, count, EntryBlocks.UNKNOWN);
        }

        Clock(long[] records, int count, int loopExtra) {
            this.records = records;
            this.count = count;
            this.loopExtra = loopExtra;
        }
    }

    /** A thread's end, for threads.jsonl. */
    private static final class Ended {
        final int index;
        final String name;
        final long position;
        final long nanos;
        final boolean alive;

        Ended(int index, String name, long position, long nanos, boolean alive) {
            this.index = index;
            this.name = name;
            this.position = position;
            this.nanos = nanos;
            this.alive = alive;
        }
    }

    /** Entry blocks the probes left out, and the positions they move (writer thread only). */
    private static final EntryBlocks ENTRY_BLOCKS = new EntryBlocks();

    private static final int STATIC_XML = 0;
    private static final int THREADS = 1;
    private static final int LOG = 2;
    private static final Object STOP = new Object();

    // Filled by the program's threads: a queue that never parks them (see HandOff).
    private static final HandOff QUEUE = new HandOff();
    // Full-size buffers the writer has encoded, for the program's threads to fill again.
    private static final Fifo<int[]> POOL = new Fifo<>(32);
    private static final Object FLOW = new Object();
    private static long inFlightBytes;
    private static long maxInFlightBytes = 64L << 20;

    private static File dir;
    private static Thread writerThread;
    private static ClockSampler sampler;
    private static volatile boolean started;
    private static volatile boolean stopped;
    private static String optionsJson = "{}";
    private static String jvmJson = "{}";
    private static long startEpochMs;
    private static long startNanos;
    private static boolean shared;

    // Writer-thread state.
    /** Open stream files by thread index (shared mode: 0 only); an array, not a map: see ClockRecords. */
    private static OutputStream[] STREAMS = new OutputStream[64];
    /** Clock records mapped and ready to be written (the writer thread's only). */
    private static final ClockRecords READY = new ClockRecords();
    private static OutputStream staticXml;
    private static Utf8.TextFile threadsJsonl;
    private static Utf8.TextFile agentLog;
    private static OutputStream clockBin;
    private static final ChunkEncoder ENCODER = new ChunkEncoder();

    // Counters for trace.json; the engine sets the class and method counts.
    /** The runtime's way to this writer (runtime does not depend on output: {@link TraceSink}). */
    private static final TraceSink SINK = new TraceSink() {
        @Override public int[] takeBuffer(int size) { return TraceWriter.takeBuffer(size); }
        @Override public void submitEvents(int stream, int[] words, int count, long first, int flags, boolean recycle,
                                           int recordWords, int represented) {
            TraceWriter.submitEvents(stream, words, count, first, flags, recycle, recordWords, represented);
        }
        @Override public void threadStarted(ThreadTrace trace, Thread thread) { TraceWriter.threadStarted(trace, thread); }
        @Override public void loaderSeen(int id, String description) { TraceWriter.loaderSeen(id, description); }
        @Override public void classSeenLate(int id, String name, int loaderId, String loader, boolean hidden,
                                            boolean array) {
            TraceWriter.classSeenLate(id, name, loaderId, loader, hidden, array);
        }
        @Override public void log(String message) { TraceWriter.log(message); }
        @Override public void blockingSample(int stream, long position, long nanos, boolean after, int loopExtra) {
            TraceWriter.blockingSample(stream, position, nanos, after, loopExtra);
        }
        @Override public void exactSample(int stream, long position, long nanos, int loopExtra) {
            QUEUE.addQuietly(new Clock(new long[] {stream, position, nanos, EventLayout.CLOCK_FLAG_EXACT}, 1, loopExtra));
        }
    };

    // trace.json's counts of classes and method ids (largest totals reported: see DescribedCounts)
    private static final DescribedCounts COUNTS = new DescribedCounts();

    /**
     * A class was described (its static.xml element queued): the counts trace.json reports. The
     * totals of classes and method ids are the registry's and the id space's at that moment.
     */
    public static void classDescribed(int classCount, int methodIds, boolean instrumented, boolean idsExhausted) {
        // A lock of its own (the counts'): shutdown holds the class's lock while it drains the
        // queue, and a class may be described (on another thread) meanwhile.
        COUNTS.described(classCount, methodIds, instrumented, idsExhausted);
    }

    private static long events;
    private static long chunks;
    private static long eventBytes;
    private static long lostEvents;
    private static int threadCount;
    /** Time recording threads spent waiting for the writer, and the writer spent encoding. */
    private static long waitNanos;
    private static long waits;
    private static long encodeNanos;
    /** Debugging aid for measuring the recording threads alone: -Djbgui.discard=true writes no events. */
    private static final boolean DISCARD = Boolean.getBoolean("jbgui.discard");

    /**
     * Chunks are compressed with {@code codec} (null: zlib). Called by the engine before
     * {@link #start}, so that the warm-up exercises it before the program runs.
     */
    public static void useCodec(ChunkCodec codec) {
        ENCODER.use(codec);
    }

    /** Creates the trace directory's files and starts the writer and clock sampler threads. */
    public static void start(File directory, String options, String jvm, boolean sharedMode, long maxBytes,
                             int clockPeriodMicros) throws IOException {
        dir = directory;
        optionsJson = options;
        jvmJson = jvm;
        shared = sharedMode;
        maxInFlightBytes = maxBytes;
        startEpochMs = System.currentTimeMillis();
        startNanos = System.nanoTime();
        new File(dir, "events").mkdirs();
        staticXml = new BufferedOutputStream(new FileOutputStream(new File(dir, "static.xml")), 1 << 18);
        staticXml.write(("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<static_information format_version=\""
                + EventLayout.FORMAT_VERSION + "\" metric_names=\"" + MetricNames.JOINED + "\">\n")
                .getBytes(Utf8.CHARSET));
        staticXml.flush();
        threadsJsonl = writer("threads.jsonl");
        agentLog = writer("agent.log");
        clockBin = new BufferedOutputStream(new FileOutputStream(new File(dir, "clock.bin")), 1 << 16);
        byte[] header = new byte[EventLayout.CLOCK_HEADER_SIZE];
        Bytes.ascii(header, 0, "JBCL");
        Bytes.putShort(header, 4, EventLayout.FORMAT_VERSION);
        Bytes.putShort(header, 6, EventLayout.CLOCK_RECORD_SIZE);
        clockBin.write(header);
        clockBin.flush();
        writeTraceJson("running", null);
        if (jbgui.runtime.ThreadObjects.virtualThreadsUnrecognised()) {
            log("warning: java.lang.BaseVirtualThread not found: virtual threads cannot be told apart,"
                    + " and what they run may be missing from the trace without trace.json saying so");
        }
        // Load and exercise what the writer thread needs now, so that the program never sees
        // the tracer's own class loading later.
        ENCODER.warmUp();
        writerThread = new Thread(new TraceWriter(), "jbgui-trace-writer");
        writerThread.setDaemon(true);
        ThreadRegistry.ignore(writerThread);
        writerThread.start();
        if (clockPeriodMicros > 0) {
            sampler = new ClockSampler(clockPeriodMicros, sharedMode);
            Thread t = new Thread(sampler, "jbgui-clock-sampler");
            t.setDaemon(true);
            ThreadRegistry.ignore(t);
            sampler.thread = t;
            t.start();
        }
        TraceSink.install(SINK);
        started = true;
    }

    private static Utf8.TextFile writer(String name) throws IOException {
        return new Utf8.TextFile(new File(dir, name), 1 << 16);
    }

    // ---------------------------------------------------------------- called by recording threads

    /** A buffer for the next events of a thread; recycled from the writer when one is free. */
    public static int[] takeBuffer(int size) {
        if (size == EventLayout.BUFFER_MAX_EVENTS) {
            int[] b = POOL.poll();
            if (b != null) {
                return b;
            }
        }
        return new int[size];
    }

    /**
     * Queues {@code count} events of stream {@code stream} starting at stream index {@code first}.
     * With {@code recycle} the writer owns {@code words} afterwards. Blocks while too many bytes
     * wait for the writer (back-pressure), except on the writer thread itself.
     */
    public static void submitEvents(int stream, int[] words, int count, long first, int flags, boolean recycle,
                                    int recordWords, int represented) {
        if (stopped) {
            throw new IllegalStateException("trace writer stopped");
        }
        long bytes = 4L * count;
        synchronized (FLOW) {
            if (inFlightBytes > maxInFlightBytes && Thread.currentThread() != writerThread) {
                long began = System.nanoTime();
                while (inFlightBytes > maxInFlightBytes && writerThread.isAlive()) {
                    try {
                        FLOW.wait(10);
                    } catch (InterruptedException e) {
                        // Keep the program's interrupt for the program.
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
                waitNanos += System.nanoTime() - began;
                waits++;
            }
            inFlightBytes += bytes;
        }
        QUEUE.add(new Events(stream, words, count, first, flags, recycle, System.nanoTime(), recordWords, represented));
    }

    public static void threadStarted(ThreadTrace trace, Thread thread) {
        boolean virtual = jbgui.runtime.ThreadObjects.isVirtual(thread);
        // Each property on its own: threads attached by the JVM itself (DestroyJavaVM on JDK 25)
        // may lack parts of their state.
        String name = null;
        long javaId = -1;
        Boolean daemon = null;
        String group = null;
        try {
            name = thread.getName();
            javaId = thread.getId();
        } catch (RuntimeException e) {
            // leave unknown
        }
        try {
            daemon = thread.isDaemon();
        } catch (RuntimeException e) {
            // leave unknown
        }
        try {
            ThreadGroup g = thread.getThreadGroup();
            group = g == null ? null : g.getName();
        } catch (RuntimeException e) {
            // leave unknown
        }
        long nanos = System.nanoTime();
        String line = "{\"kind\": \"start\", \"index\": " + trace.index + ", \"java_id\": " + javaId
                + ", \"name\": " + Json.quote(name) + ", \"daemon\": " + daemon
                + ", \"virtual\": " + virtual + ", \"group\": " + Json.quote(group)
                + ", \"nanos\": " + nanos + "}\n";
        QUEUE.addQuietly(new Text(THREADS, line));
        QUEUE.addQuietly(new Clock(new long[] {trace.index, 0, nanos, EventLayout.CLOCK_FLAG_EXACT}, 1, 0));
    }

    public static void loaderSeen(int id, String description) {
        log("loader " + id + ": " + description);
    }

    public static void classSeenLate(int id, String name, int loaderId, String loader, boolean hidden, boolean array) {
        if (!started) {
            return;
        }
        staticInfo(ClassElement.uninstrumented(id, name, loaderId, loader, "not-modifiable", false, true, hidden, array));
    }

    /**
     * Appends one or more complete {@code <class>} elements to static.xml: the object's
     * {@code toString()}, called on the writer thread.
     */
    public static void staticInfo(Object xml) {
        QUEUE.addQuietly(new Text(STATIC_XML, xml));
    }

    /** A line for agent.log. */
    public static void log(String message) {
        QUEUE.addQuietly(new Text(LOG, message + "\n"));
    }

    /** An exact sample a thread takes around a call that may block (ThreadTrace.stamp). */
    public static void blockingSample(int stream, long position, long nanos, boolean after, int loopExtra) {
        int flags = EventLayout.CLOCK_FLAG_EXACT | EventLayout.CLOCK_FLAG_BLOCKING
                | (after ? EventLayout.CLOCK_FLAG_AFTER : 0);
        QUEUE.addQuietly(new Clock(new long[] {stream, position, nanos, flags}, 1, loopExtra));
    }

    static void clockSamples(long[] records, int count) {
        QUEUE.add(new Clock(records, count));
    }

    // ---------------------------------------------------------------- the writer thread

    @Override
    public void run() {
        long lastHousekeeping = System.nanoTime();
        try {
            for (;;) {
                Object item = QUEUE.poll(20);
                if (item == STOP) {
                    break;
                }
                if (item != null) {
                    handle(item);
                }
                long now = System.nanoTime();
                if (now - lastHousekeeping > 100_000_000L || item == null) {
                    housekeeping();
                    lastHousekeeping = now;
                }
            }
            // Drain what the final flush queued after STOP was decided.
            Object item;
            while ((item = QUEUE.poll()) != null) {
                if (item != STOP) {
                    handle(item);
                }
            }
            ENTRY_BLOCKS.drain(READY);
            READY.writeTo(clockBin);
        } catch (Throwable e) {
            System.err.println("jbgui agent: the trace writer failed: " + e + " (the trace is incomplete)");
            stopped = true;
        }
    }

    private static void handle(Object item) throws IOException {
        handled++;
        if (WRITER_DELAY_MILLIS > 0) {
            try {
                Thread.sleep(WRITER_DELAY_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (item instanceof Events) {
            Events ev = (Events) item;
            writeEvents(ev);
            synchronized (FLOW) {
                inFlightBytes -= 4L * ev.count;
                FLOW.notifyAll();
            }
            if (ev.recycle && ev.words.length == EventLayout.BUFFER_MAX_EVENTS) {
                POOL.offer(ev.words);
            }
        } else if (item instanceof Text) {
            Text t = (Text) item;
            if (t.file == STATIC_XML) {
                try {
                    if (t.text instanceof XmlFragment) {
                        ((XmlFragment) t.text).writeTo(staticXml);
                    } else {
                        staticXml.write(String.valueOf(t.text).getBytes(Utf8.CHARSET));
                    }
                } catch (IOException e) {
                    throw e;
                } catch (Throwable e) {
                    // A class that cannot be described must not stop the writer.
                    agentLog.write("error: static information lost: " + e + "\n");
                }
                return;
            }
            Utf8.TextFile w = t.file == THREADS ? threadsJsonl : agentLog;
            w.write(String.valueOf(t.text));
        } else if (item instanceof Clock) {
            writeClock((Clock) item);
        } else if (item instanceof Ended) {
            // Formatted here, after the thread's last chunk: its event count as written.
            Ended e = (Ended) item;
            long written = shared ? e.position : ENTRY_BLOCKS.written(e.index, e.position);
            threadsJsonl.write("{\"kind\": \"end\", \"index\": " + e.index + ", \"name\": " + Json.quote(e.name)
                    + ", \"events\": " + written + ", \"nanos\": " + e.nanos + ", \"alive_at_exit\": " + e.alive + "}\n");
        }
    }

    private static void writeEvents(Events ev) throws IOException {
        // Static information first: events may refer to classes whose description is still queued.
        staticXml.flush();
        OutputStream out = openStream(ev.stream);
        if (out == null) {
            String name = shared ? "shared.jbt" : streamFileName(ev.stream);
            out = new FileOutputStream(new File(new File(dir, "events"), name), true);
            byte[] header = new byte[EventLayout.STREAM_HEADER_SIZE];
            Bytes.ascii(header, 0, "JBTS");
            Bytes.putShort(header, 4, EventLayout.FORMAT_VERSION);
            Bytes.putShort(header, 6, EventLayout.STREAM_HEADER_SIZE);
            Bytes.putInt(header, 8, shared ? EventLayout.STREAM_KIND_SHARED : EventLayout.STREAM_KIND_THREAD);
            Bytes.putInt(header, 12, shared ? 0 : ev.stream);
            Bytes.putLong(header, 16, System.nanoTime());
            out.write(header);
            eventBytes += header.length;
            setStream(ev.stream, out);
        }
        long began = System.nanoTime();
        int count = ev.count;
        long first = ev.first;
        ClockRecords ready = READY;
        if (!shared) {
            ENTRY_BLOCKS.count(ev.stream, ev.words, ev.count, ev.first, ev.recordWords, ev.represented, ready);
            count = ENTRY_BLOCKS.events;
            first = ENTRY_BLOCKS.first;
        }
        int filterBits = shared ? 0 : (ENTRY_BLOCKS.marked > 0 ? EventLayout.FILTER_ENTRY_BLOCKS : 0)
                | (ENTRY_BLOCKS.loopWords > 0 ? EventLayout.FILTER_LOOPS : 0);
        int written = DISCARD ? 0 : ENCODER.writeChunk(out, ev.words, ev.count, count, first, ev.flags, filterBits);
        encodeNanos += System.nanoTime() - began;
        events += count;
        chunks++;
        eventBytes += written;
        ready.add(shared ? 0 : ev.stream, first + count, ev.nanos, EventLayout.CLOCK_FLAG_EXACT);
        ready.writeTo(clockBin);
        if ((ev.flags & EventLayout.CHUNK_FLAG_LAST) != 0) {
            out.close();
            setStream(ev.stream, null);
        }
    }

    /** T000001.jbt; built by hand because String.format reaches locale providers, late in the JVM's exit. */
    static String streamFileName(int stream) {
        String digits = Integer.toString(stream);
        StringBuilder b = new StringBuilder("T");
        for (int i = digits.length(); i < 6; i++) {
            b.append('0');
        }
        return b.append(digits).append(".jbt").toString();
    }

    /** Clock records of stored positions: mapped to written ones (EntryBlocks) before they are written. */
    private static void writeClock(Clock c) throws IOException {
        ClockRecords ready = READY;
        long[] r = c.records;
        for (int i = 0; i < c.count; i++) {
            int at = 4 * i;
            if (shared) {
                ready.add(r[at], r[at + 1], r[at + 2], r[at + 3]);
            } else {
                ENTRY_BLOCKS.clock(r[at], r[at + 1], r[at + 2], r[at + 3], c.count == 1 ? c.loopExtra : EntryBlocks.UNKNOWN,
                        ready);
            }
        }
        ready.writeTo(clockBin);
    }

    /** The stream file of a thread (by index; shared mode: 0), or null while none is open. */
    private static OutputStream openStream(int stream) {
        return stream < STREAMS.length ? STREAMS[stream] : null;
    }

    private static void setStream(int stream, OutputStream out) {
        if (stream >= STREAMS.length) {
            STREAMS = java.util.Arrays.copyOf(STREAMS, Math.max(2 * STREAMS.length, stream + 1));
        }
        STREAMS[stream] = out;
    }

    /**
     * How often the program's threads' caches of classes are emptied (ThreadTrace.forgetClasses),
     * so that a class whose loader the program dropped can be unloaded at the next collection
     * after it. Each thread then looks its receivers' classes up once more.
     */
    private static final long FORGET_CLASSES_NANOS = 500_000_000L;
    private static long lastForget;

    /**
     * Flushes the text files, finishes the streams of threads that have ended and, every
     * {@link #FORGET_CLASSES_NANOS}, empties the live threads' caches of classes.
     */
    private static void housekeeping() throws IOException {
        staticXml.flush();
        threadsJsonl.flush();
        agentLog.flush();
        clockBin.flush();
        if (!Tracer.isActive()) {
            return;
        }
        List<ThreadTrace> dead = new ArrayList<>();
        long now = System.nanoTime();
        boolean forget = now - lastForget > FORGET_CLASSES_NANOS;
        if (forget) {
            lastForget = now;
        }
        for (ThreadTrace t : ThreadRegistry.all()) {
            if (!t.thread().isAlive()) {
                dead.add(t);
            } else if (forget) {
                t.forgetClasses();
            }
        }
        for (ThreadTrace t : dead) {
            finishThread(t, false);
        }
        ThreadRegistry.removeDead(dead);
        // Chunks finishThread queued are written on the next turns of the loop.
    }

    private static void finishThread(ThreadTrace t, boolean alive) {
        if (!t.markFinished()) {
            return;
        }
        long end = t.finish(alive);
        lostEvents += t.lostEvents();
        threadCount++;
        long nanos = System.nanoTime();
        QUEUE.add(new Ended(t.index, nameOf(t.thread()), end, nanos, alive));
        if (!shared) {
            QUEUE.add(new Clock(new long[] {t.index, end, nanos, EventLayout.CLOCK_FLAG_EXACT}, 1));
        }
    }

    private static String nameOf(Thread t) {
        try {
            return t.getName();
        } catch (RuntimeException e) {
            return null;
        }
    }

    // ---------------------------------------------------------------- the end

    /**
     * The final flush: called once, from the JVM's shutdown sequence, after the program's own
     * shutdown hooks. Stops recording, hands every thread's remaining events to the writer, waits
     * for it to drain and marks the trace complete.
     */
    public static synchronized void shutdown(String reason) {
        if (!started || stopped) {
            return;
        }
        Tracer.setActive(false);
        if (sampler != null) {
            sampler.stop();
        }
        for (ThreadTrace t : ThreadRegistry.all()) {
            finishThread(t, t.thread().isAlive());
        }
        if (shared) {
            Tracer.finishShared();
        }
        QUEUE.add(STOP);
        awaitWriter();
        stopped = true;
        try {
            synchronized (FLOW) {
                agentLog.write("info: writer encoded " + chunks + " chunks (" + events + " events) in "
                        + encodeNanos / 1_000_000 + " ms; recording threads waited for it " + waits + " times, "
                        + waitNanos / 1_000_000 + " ms in all; " + ENTRY_BLOCKS.insertedTotal
                        + " of them first blocks implied by their method's start, " + ENTRY_BLOCKS.loopEventsTotal
                        + " steps of loops in " + ENTRY_BLOCKS.loopWordsTotal + " words of loop records\n");
                if (ThreadRegistry.virtualThreadsUntraced()) {
                    agentLog.write("warning: virtual threads ran and were not traced: what they ran is not in the trace"
                            + " (the first " + jbgui.runtime.Config.virtualThreadsMax + " are traced, agent option virtual=N;"
                            + " trace.json: limits.virtual_threads_untraced)\n");
                }
            }
            for (OutputStream out : STREAMS) {
                if (out != null) {
                    out.close();
                }
            }
            staticXml.write("</static_information>\n".getBytes(Utf8.CHARSET));
            staticXml.close();
            threadsJsonl.close();
            agentLog.close();
            clockBin.close();
            writeTraceJson(writerThread.isAlive() ? "incomplete" : "complete", reason);
        } catch (IOException e) {
            System.err.println("jbgui agent: could not finish the trace in " + dir + ": " + e);
        }
    }

    /** Items the writer has handled: shutdown waits while this moves. */
    private static volatile long handled;
    /**
     * How long shutdown waits for a writer that handles nothing before it gives up on it: 120 s,
     * or -Djbgui.writerStallSeconds (for tests, with -Djbgui.writerDelayMillis: a pause before
     * each item the writer handles, standing in for a slow machine).
     */
    static final long STALLED_WRITER_NANOS = Long.getLong("jbgui.writerStallSeconds", 120L) * 1_000_000_000L;
    private static final long WRITER_DELAY_MILLIS = Long.getLong("jbgui.writerDelayMillis", 0L);

    /**
     * Waits for the writer to drain the queue, as long as it makes progress: a cold start on a
     * loaded machine (every class described and cached at the exit of a short program) took over
     * the two minutes a fixed timeout allowed, and the trace ended "incomplete" with its events
     * still queued. Only a writer that handles nothing for {@link #STALLED_WRITER_NANOS} is left.
     */
    private static void awaitWriter() {
        long seen = handled;
        long since = System.nanoTime();
        while (writerThread.isAlive()) {
            try {
                writerThread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            long now = handled;
            if (now != seen) {
                seen = now;
                since = System.nanoTime();
            } else if (System.nanoTime() - since > STALLED_WRITER_NANOS) {
                return;
            }
        }
    }

    private static void writeTraceJson(String status, String endReason) throws IOException {
        StringBuilder s = new StringBuilder(1024);
        s.append("{\n  \"format\": \"jbgui-trace\",\n  \"format_version\": ").append(EventLayout.FORMAT_VERSION);
        s.append(",\n  \"status\": ").append(Json.quote(status));
        s.append(",\n  \"agent\": ").append(optionsJson);
        s.append(",\n  \"jvm\": ").append(jvmJson);
        s.append(",\n  \"start\": {\"epoch_ms\": ").append(startEpochMs).append(", \"nanos\": ").append(startNanos).append("}");
        if (endReason != null) {
            s.append(",\n  \"end\": {\"epoch_ms\": ").append(System.currentTimeMillis()).append(", \"nanos\": ")
                    .append(System.nanoTime()).append(", \"reason\": ").append(Json.quote(endReason)).append("}");
        }
        s.append(",\n  \"event_layout\": {\"type_bits\": 2, \"method_bits\": ").append(EventLayout.METHOD_BITS)
                .append(", \"block_bits\": ").append(EventLayout.BLOCK_BITS).append("}");
        s.append(",\n  \"counts\": {\"threads\": ").append(threadCount).append(", \"classes\": ").append(COUNTS.classes())
                .append(", \"classes_instrumented\": ").append(COUNTS.instrumented()).append(", \"methods\": ").append(COUNTS.methods())
                .append(", \"events\": ").append(events).append(", \"chunks\": ").append(chunks)
                .append(", \"event_bytes\": ").append(eventBytes).append(", \"lost_events\": ").append(lostEvents).append("}");
        s.append(",\n  \"limits\": {\"method_ids_exhausted\": ").append(COUNTS.idsExhausted())
                .append(", \"classes_not_instrumented\": ").append(COUNTS.notInstrumented())
                .append(", \"virtual_threads_untraced\": ").append(ThreadRegistry.virtualThreadsUntraced())
                .append(", \"virtual_threads_traced\": ").append(ThreadRegistry.virtualThreadsTraced())
                .append(", \"virtual_threads_max\": ").append(jbgui.runtime.Config.virtualThreadsMax).append("}\n}\n");
        File tmp = new File(dir, "trace.json.tmp");
        try (Utf8.TextFile w = new Utf8.TextFile(tmp, 1 << 12)) {
            w.write(s.toString());
        }
        File target = new File(dir, "trace.json");
        if (!tmp.renameTo(target)) {
            throw new IOException("cannot rename " + tmp + " to " + target);
        }
    }

    public static File directory() {
        return dir;
    }
}
