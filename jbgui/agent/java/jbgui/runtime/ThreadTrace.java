package jbgui.runtime;

import jdk.internal.vm.annotation.DontInline;
import jdk.internal.vm.annotation.ForceInline;


/**
 * One thread's event buffer and tracer state.
 *
 * <p>Instrumented methods fetch it once at method start ({@link Tracer#enter}) and keep it in a
 * local variable, so recording a block is a static call, a null check and an array store. The
 * buffer is handed to the writer thread when full; {@link #guard} is non-zero while the tracer
 * itself runs on this thread, which makes every instrumented method it reaches record nothing.
 */
public final class ThreadTrace {
    static final boolean SHARED = Config.mode == 1;

    /** Placeholder while a thread registers: guarded, so the registration itself is not traced. */
    static final ThreadTrace REGISTERING = new ThreadTrace(1);
    /** An empty slot of ThreadRegistry's table (never null there, so its lookup needs no null check). */
    static final ThreadTrace EMPTY = new ThreadTrace(1);
    /**
     * What Tracer.enter gives a frame that must record nothing (the tracer runs on its thread, the
     * thread is the tracer's own or not registered yet): a closed trace whose events are dropped.
     * The probes then never test for null: a frame's trace is always an object, which the JIT
     * proves once (a free implicit check) instead of testing, and merging again, at every block;
     * the shared profile of that test (tracer threads run traced JDK code) made it a real branch
     * everywhere. Threads may share it, so its stores are kept in bounds by the index mask of
     * {@link #put}, whatever its racing position says.
     */
    static final ThreadTrace DISCARD = new ThreadTrace();

    private static final int RECEIVER_CACHE = 1024;

    final Thread thread;
    public final int index;
    /** A virtual thread's: its hand-offs pin it to its carrier (CarrierPin). */
    final boolean virtual;
    int[] buf;
    int pos;
    /**
     * When {@link #pos} reaches it, {@link #overflow} runs: at {@link #end} it hands the buffer
     * over; before it, it takes a clock sample and moves the limit on by SAMPLE_EVENTS.
     */
    int limit;
    /** Where the buffer is handed over: buf.length - slack (1 in mode 1). */
    int end;
    /** Events of this stream already handed to the writer (the stream index of buf[0]). */
    long base;
    /** Non-zero while tracer or agent code runs on this thread. */
    int guard;
    /** How much of {@link #guard} comes from the agent's class-file hook (see Tracer.agentEnter). */
    int hookDepth;
    long lost;
    boolean lostBefore;
    /**
     * The words of the loop records in {@link #buf} and the events they stand for
     * (EventLayout.LOOP_REPRESENTED_MAX), passed with the buffer: the writer would otherwise scan
     * every word for them.
     */
    int represented;
    int recordWords;
    /** Buffers handed over so far: with {@link #pos}, a place in the stream (Tracer.loopMark). */
    int handoffs;
    /** Set by the final flush: nothing this thread records afterwards reaches the trace. */
    boolean closed;
    private final Class<?>[] receiverKeys;
    private final int[] receiverIds;
    /**
     * What the probes get on this thread while it must record nothing (guarded: the tracer runs
     * on it, or it is one of the tracer's own threads): a closed trace of its own, so that such
     * threads do not all store into {@link #DISCARD}. A thread loading classes runs the
     * instrumenter, guarded, and the writer describes classes, each through tens of millions of
     * probes in the JDK's code on a run with a cold class cache, and when they shared DISCARD two
     * cores wrote one object's position (docs/recorder-cost.md, "The tracer's own threads through
     * the JDK's
     * probes"). An ignored thread's entry is its own sink; null in the shared placeholders, which
     * give DISCARD.
     */
    private final ThreadTrace sink;
    /** One of the tracer's own threads ({@link #ignored}): permanently guarded, never a stream. */
    final boolean ignored;

    private ThreadTrace(int guard) {
        this.thread = null;
        this.index = 0;
        this.virtual = false;
        this.guard = guard;
        this.buf = new int[1];
        this.limit = 1;
        this.end = 1;
        this.receiverKeys = null;
        this.receiverIds = null;
        this.sink = null;
        this.ignored = false;
    }

    /** A closed trace that takes what a thread's probes store while it records nothing ({@link #sink}). */
    private ThreadTrace(int[] buffer, Thread owner, boolean ignored) {
        this.thread = owner;
        this.index = 0;
        this.virtual = false;
        this.guard = 1;
        this.closed = true;
        this.buf = buffer;
        this.end = limitOf(buf);
        this.limit = Math.min(end, SAMPLE_EVENTS);
        this.receiverKeys = null;
        this.receiverIds = null;
        this.sink = ignored ? this : null;
        this.ignored = ignored;
    }

    /**
     * The entry of one of the tracer's own threads in ThreadRegistry: permanently guarded and
     * closed, it is also where its probes store (its own {@link #sink}), and it may take the
     * thread's fast slot, so that the JDK code the thread runs finds it without the table.
     */
    static ThreadTrace ignored(Thread thread) {
        return new ThreadTrace(new int[EventLayout.BUFFER_MIN_EVENTS], thread, true);
    }

    /** Where the probes store while this thread records nothing ({@link #sink}). */
    ThreadTrace sink() {
        return sink != null ? sink : DISCARD;
    }

    /** {@link #DISCARD}. */
    private ThreadTrace() {
        this.thread = null;
        this.index = 0;
        this.virtual = false;
        this.guard = 1;
        this.closed = true;
        this.buf = new int[EventLayout.BUFFER_MAX_EVENTS];
        this.end = limitOf(buf);
        this.limit = Math.min(end, SAMPLE_EVENTS);
        this.receiverKeys = new Class<?>[RECEIVER_CACHE];
        this.receiverIds = new int[RECEIVER_CACHE];
        this.sink = null;
        this.ignored = false;
    }

    ThreadTrace(Thread thread, int index) {
        this.thread = thread;
        this.index = index;
        this.virtual = ThreadObjects.isVirtual(thread);
        this.guard = 1; // until started() has run
        this.buf = new int[SHARED ? 1 : EventLayout.BUFFER_MIN_EVENTS];
        this.end = limitOf(buf);
        this.limit = Math.min(end, SAMPLE_EVENTS);
        this.receiverKeys = new Class<?>[RECEIVER_CACHE];
        this.receiverIds = new int[RECEIVER_CACHE];
        this.sink = new ThreadTrace(new int[EventLayout.BUFFER_MIN_EVENTS], null, false);
        this.ignored = false;
    }

    /** Announces the thread to the writer; runs once, guarded, right after registration. */
    void started() {
        try {
            TraceSink.current().threadStarted(this, thread);
        } catch (Throwable e) {
            // The thread is still traced; only its name is missing from the table.
            try {
                TraceSink.current().log("warning: thread " + index + " not described: " + e);
            } catch (Throwable ignored) {
                // Nothing more to do.
            }
        } finally {
            guard = 0;
        }
    }

    public Thread thread() {
        return thread;
    }

    /** Events recorded so far; read racily by the clock sampler, so it may lag by a few events. */
    public long position() {
        long b = base;
        return b + pos;
    }

    /**
     * The events the loop records in the buffer now stand for beyond their words: what a clock
     * sample the thread takes at its position passes on, so that the writer maps the position to
     * events without reading the buffer's words up to it (jbgui.output.EntryBlocks). Only the
     * owning thread's own reading agrees with its position.
     */
    int loopExtra() {
        return represented - recordWords;
    }

    private static final boolean START = Config.recordMethodStart;
    private static final boolean START_RECEIVER = START && Config.recordReceiver;

    private static int limitOf(int[] buffer) {
        return buffer.length <= 1 ? 1 : buffer.length - EventLayout.BUFFER_SLACK_EVENTS;
    }

    /**
     * The most events between two clock samples of a thread that records without pause: a buffer
     * larger than this takes an exact sample (TraceSink.exactSample) each time it holds this many
     * more. Time between samples is interpolated by event count, and an interval whose time per
     * event is far above the thread's pace is shown as interpolated (jbgui/model/time_quality.py):
     * the more events an interval holds, the longer the unmeasured pause it can hide. This is the
     * buffer size until buffers grew to 262,144 events (EventLayout.BUFFER_MAX_EVENTS), so that the
     * timeline's samples are as dense as they were.
     */
    static final int SAMPLE_EVENTS = 65536;

    /** A method start (Tracer.enter). */
    void start(int event) {
        if (START) {
            put(event);
        } else {
            check();
        }
    }

    /**
     * An instance method's start and the class of its receiver (Tracer.enterSlow). The receiver
     * gets its word here, and its class's methods their slots in Tracer's table of own classes,
     * so that the next receiver of a method's own class takes the fast path with the mark
     * (Tracer.ownerSeen).
     */
    void startInstance(int event, Object self) {
        if (START_RECEIVER) {
            Class<?> c = self.getClass();
            int word = receiverWord(c);
            int id = word & EventLayout.VALUE_MASK;
            if (id != 0) {
                Tracer.receiverSeen(this, event, c, word);
            }
            Tracer.ownerSeen(c, id);
            put2(event, word);
            return;
        }
        start(event);
    }

    /** The class of the last receiver looked up on this thread, and its word (Tracer.enterInstance's fast path). */
    Class<?> lastClass;
    int lastWord;

    private int receiverWord(Class<?> c) {
        int id = classId(c);
        int word = EventLayout.extended(EventLayout.EXT_RECEIVER, id);
        if (id != 0) {
            lastWord = word;
            lastClass = c;
        }
        return word;
    }

    /**
     * Records one event and hands the buffer over when it is full: the method-entry, method-exit
     * and exception-exit probes and the checked block probes (EventLayout.BUFFER_SLACK_EVENTS).
     * Kept within HotSpot's MaxInlineSize (35 bytes of bytecode) so that both compilers inline it
     * into Tracer's probes (which C2 then inlines into the traced method where it is hot; see
     * Tracer): a call here per event cost more than the store. Mode 1's buffer holds one word and
     * its limit is 1, so there every event reaches {@link #overflow}, which hands it to the shared
     * stream.
     */
    void put(int event) {
        putUnchecked(event);
        if (pos >= limit) {
            overflow();
        }
    }

    /** The test of {@link #put} alone: where a probe that tests records nothing (events=…). */
    void check() {
        if (pos >= limit) {
            overflow();
        }
    }

    /**
     * Records one event without testing for a full buffer: the store of {@link #put}, and what
     * Tracer.block writes out for most block probes. No call and no branch to one in a probe:
     * traced javac's C2 took 18 s of CPU (3.7 s untraced), and 12.2 s in a trial that took the
     * test out of every probe (its trace useless; -XX:+CITime, one run each). The slack past
     * {@link #limit} holds every event written between two tests; the index is masked into the
     * buffer whatever the position says (racing writers of DISCARD, or a run longer than the
     * slack, which {@link #flush} then reports as lost instead of writing past the buffer).
     */
    void putUnchecked(int event) {
        int p = pos;
        ThreadObjects.store(buf, p, event);
        pos = p + 1;
    }

    /** Two events that must stay adjacent (a method start and its receiver). */
    void put2(int first, int second) {
        if (SHARED) {
            if (!closed) {
                SharedStream.put2(this, first, second);
            }
            return;
        }
        putUnchecked(first);
        put(second);
    }

    /**
     * A loop record (EventLayout.EXT_LOOP) at the end of the buffer: {@code steps} steps of the
     * cycle {@code mask} whose header's block word is {@code header}. Hands the buffer over when
     * full or when its records stand for LOOP_REPRESENTED_MAX events, which bounds a chunk's events.
     */
    void putLoop(int steps, int header, int back, int mask, int call, int leaf) {
        int p = pos;
        ThreadObjects.store(buf, p, EventLayout.loopSteps(steps, back));
        ThreadObjects.store(buf, p + 1, header);
        ThreadObjects.store(buf, p + 2, EventLayout.loopCycle(mask));
        int n = 3;
        if (leaf != 0) {
            ThreadObjects.store(buf, p + 3, EventLayout.loopCall(call, leaf));
            n = 4;
            int path = EventLayout.loopPath(call);
            if (path != 0) {
                ThreadObjects.store(buf, p + 4, path);
                n = 5;
            }
        }
        pos = p + n;
        recordWords += n;
        if ((represented += EventLayout.loopEvents(steps, back, mask, call, leaf)) >= EventLayout.LOOP_REPRESENTED_MAX
                || p + n >= limit - MARK_ROOM) {
            overflow();
        }
    }

    /** The block words of a loop's first {@code steps} (at most 3) steps, which a record would stand for. */
    void putSteps(int steps, int header, int back, int mask) {
        int lo = header - back;
        int k = back;
        int p = pos;
        for (int s = 0; s < steps; s++) {
            ThreadObjects.store(buf, p + s, lo + k);
            int higher = mask & -(2 << k);   // the cycle's blocks after block lo + k
            k = Integer.numberOfTrailingZeros(higher != 0 ? higher : mask);
        }
        pos = p + steps;
        if (p + steps >= limit - MARK_ROOM) {
            overflow();
        }
    }

    /**
     * A loop record that belongs at {@code mark} (Tracer.loopMark), before what the thread recorded
     * since: the constructor of an implicit exception thrown in the loop, which ran before the
     * exception-exit handler could store the record. When the buffer was handed over since (that
     * constructor recorded more than the buffer held), the record goes at the end, after those
     * events, and the log says so.
     */
    void putLoopAt(int mark, int steps, int header, int back, int mask, int call, int leaf) {
        int at = mark & MARK_POSITION;
        int p = pos;
        int path = leaf != 0 ? EventLayout.loopPath(call) : 0;
        int n = leaf == 0 ? 3 : path == 0 ? 4 : 5;
        if ((mark >>> MARK_SHIFT) != (handoffs & MARK_EPOCHS) || at > p || p + n > buf.length || closed) {
            if (!closed && at != p) {
                guard++;
                try {
                    TraceSink.current().log("warning: thread " + index
                            + ": a loop record follows the events of the exception thrown in it");
                } catch (Throwable ignored) {
                    // Only the warning is lost.
                } finally {
                    guard--;
                }
            }
            putLoop(steps, header, back, mask, call, leaf);
            return;
        }
        System.arraycopy(buf, at, buf, at + n, p - at);
        buf[at] = EventLayout.loopSteps(steps, back);
        buf[at + 1] = header;
        buf[at + 2] = EventLayout.loopCycle(mask);
        if (leaf != 0) {
            buf[at + 3] = EventLayout.loopCall(call, leaf);
            if (path != 0) {
                buf[at + 4] = path;
            }
        }
        pos = p + n;
        recordWords += n;
        if ((represented += EventLayout.loopEvents(steps, back, mask, call, leaf)) >= EventLayout.LOOP_REPRESENTED_MAX
                || p + n >= limit) {
            overflow();
        }
    }

    /**
     * A place in the stream: the buffer's position, and which buffer (Tracer.loopMark).
     *
     * <p>Forced inline: Tracer.loopMark calls it on a loop's first step only, so on JDK 25 C2
     * rates the call site rare ("low call site frequency", its MinInlineFrequencyRatio) and leaves
     * a call inside the loop, on the path of no step but the first. A call in a loop's body keeps
     * C2 from keeping the loop's array rows and bounds in registers: the compute kernel's matrix
     * product ran at 3.3 ns a step instead of JDK 17's 0.9 (docs/recorder-cost.md, "2026-12-04").
     */
    @ForceInline
    int mark() {
        return (handoffs << MARK_SHIFT) | pos;
    }

    /**
     * The words a record's mark (Tracer.loopMark) should find left before the buffer's limit, so
     * that an implicit exception's constructor in the loop (usually some tens of events) leaves
     * the record's place in the buffer: the exception-exit handler puts the record there
     * (putLoopAt), and a leaf's body in place takes those events back (retract). Storing a record
     * or a short loop's steps hands the buffer over when fewer are left, so that the next loop's
     * mark, a few blocks later, has them. Not tested in {@link #mark} itself: a call there, in
     * the loop's header, made C2 compile the compute kernel's matmul loops 1.7 times slower, even
     * on a path taken once per loop entry. Without that test the test program's second thread,
     * whose buffers start at 1,024 words, met a hand-over between a mark and the exception.
     */
    static final int MARK_ROOM = 256;

    /** A buffer's position, up to its length BUFFER_MAX_EVENTS (a power of two) included, fits MARK_SHIFT bits; the rest counts buffers, modulo. */
    static final int MARK_SHIFT = 32 - Integer.numberOfLeadingZeros(EventLayout.BUFFER_MAX_EVENTS);
    static final int MARK_POSITION = (1 << MARK_SHIFT) - 1;
    static final int MARK_EPOCHS = (1 << (32 - MARK_SHIFT)) - 1;

    /** The buffer is full: hand it over (mode 2) or pass the one event on (mode 1). */
    @DontInline
    void overflow() {
        if (closed) {
            pos = 0;
            represented = 0;
            recordWords = 0;
            return;
        }
        if (SHARED) {
            pos = 0;
            SharedStream.put(this, buf[0]);
            return;
        }
        int p = pos;
        if (limit < end && end - p > MARK_ROOM && represented < EventLayout.LOOP_REPRESENTED_MAX) {
            // Not full yet: a clock sample here, and the next one SAMPLE_EVENTS further on. Loop
            // records' marks stay valid (no hand-over), and the MARK_ROOM the loop probes asked
            // for is still there before the end.
            limit = Math.min(end, p + SAMPLE_EVENTS);
            sample(p);
            return;
        }
        flush(false);
    }

    /** An exact clock sample at buffer position {@code p} (see {@link #SAMPLE_EVENTS}). */
    private void sample(int p) {
        if (guard != 0) {
            return;
        }
        guard++;
        try {
            TraceSink.current().exactSample(index, base + p, System.nanoTime(), loopExtra());
        } catch (Throwable e) {
            // The sample is lost: the time there is interpolated over more events, as without it.
        } finally {
            guard--;
        }
    }

    /**
     * Hands the buffer to the writer. Called by the owning thread when the buffer is full, and by
     * the writer for threads that have died or at the final flush ({@code fromOutside}).
     */
    void flush(boolean fromOutside) {
        if (!virtual || fromOutside) {
            flushLocked(fromOutside);
            return;
        }
        // A virtual thread is pinned to its carrier before it takes the lock (CarrierPin says
        // why), guarded: pinning calls traced JDK code (JavaLangAccess.getContinuation).
        guard++;
        boolean pinned = CarrierPin.hold();
        try {
            flushLocked(false);
        } finally {
            if (pinned) {
                CarrierPin.release();
            }
            guard--;
        }
    }

    private synchronized void flushLocked(boolean fromOutside) {
        int n = pos;
        if (closed) {
            pos = 0;
            return;
        }
        if (n == 0) {
            return;
        }
        guard++;
        try {
            int[] full = buf;
            if (n > full.length) {
                // More events than the slack holds were written since the last test (a probe
                // placement that broke ProbeInserter's bound): the masked index wrapped and the
                // buffer's first words were overwritten. Say so instead of writing wrong events.
                overran(n);
                return;
            }
            int flags = lostBefore ? EventLayout.CHUNK_FLAG_LOST_BEFORE : 0;
            int nextSize = Math.min(full.length * 2, EventLayout.BUFFER_MAX_EVENTS);
            int[] next = fromOutside ? full : TraceSink.current().takeBuffer(nextSize);
            TraceSink.current().submitEvents(index, full, n, base, flags, !fromOutside, recordWords, represented);
            base += n;
            pos = 0;
            represented = 0;
            recordWords = 0;
            handoffs++;
            buf = next;
            end = limitOf(next);
            limit = Math.min(end, SAMPLE_EVENTS);
            lostBefore = false;
        } catch (Throwable e) {
            // Never fail the program because of the tracer: count the events as lost and go on.
            lost += n;
            base += n;
            pos = 0;
            represented = 0;
            recordWords = 0;
            handoffs++;
            lostBefore = true;
        } finally {
            guard--;
        }
    }

    private void overran(int n) {
        lost += n;
        base += n;
        pos = 0;
        represented = 0;
        recordWords = 0;
        handoffs++;
        lostBefore = true;
        TraceSink.current().log("error: thread " + index + " wrote " + n + " events between two buffer tests, more than "
                + buf.length + "; they are lost");
    }

    /**
     * An exact clock sample at this thread's current position, taken around a call that may block
     * ({@code after}: the call has returned). Queued to the writer in program order, behind the
     * chunks this thread submitted before, so that samples at one position stay in time order.
     */
    void stamp(boolean after) {
        stamp(System.nanoTime(), after);
    }

    /**
     * A monitorenter that took at least this long waited for its lock (an uncontended one takes
     * tens of nanoseconds): its clock reads become a pair of blocking stamps.
     */
    static final long CONTENDED_NANOS = 50_000L;

    /** The clock read just before a monitorenter (Tracer.monitorEnter). */
    long lockNanos;

    /** After a monitorenter: stamps the wait for the lock when there was one. */
    void entered() {
        long now = System.nanoTime();
        if (now - lockNanos >= CONTENDED_NANOS) {
            stamp(lockNanos, false);
            stamp(now, true);
        }
    }

    private void stamp(long nanos, boolean after) {
        if (closed || guard != 0) {
            return;
        }
        guard++;
        try {
            TraceSink.current().blockingSample(index, base + pos, nanos, after, loopExtra());
        } catch (Throwable e) {
            // The sample is lost; the time of that call is then interpolated, as without it.
        } finally {
            guard--;
        }
    }

    /**
     * The final flush of a thread, by the writer: the rest of the buffer, then closed. Returns the
     * thread's stream length: a thread still running (a daemon at exit) goes on storing into the
     * closed buffer, so {@link #position} read afterwards would count words that never reach the
     * trace.
     */
    public synchronized long finish(boolean alive) {
        guard++;
        try {
            int n = pos;
            if (alive && n > 0 && !closed) {
                settle();
            }
            if (!closed && n > buf.length) {
                overran(n);
            } else if (!closed && n > 0) {
                int flags = EventLayout.CHUNK_FLAG_FINAL_FLUSH | (alive ? 0 : EventLayout.CHUNK_FLAG_LAST)
                        | (lostBefore ? EventLayout.CHUNK_FLAG_LOST_BEFORE : 0);
                int[] copy = java.util.Arrays.copyOf(buf, n);
                // A thread that is still running may be storing a loop record right now: its count
                // fields and its position need not agree, so the copied words are counted instead,
                // and a record the copy cut off is left out.
                int[] counts = loopCounts(copy, n);
                n = counts[0];
                TraceSink.current().submitEvents(index, copy, n, base, flags, false, counts[1], counts[2]);
                base += n;
            }
            pos = 0;
            closed = true;
            return base;
        } finally {
            guard--;
        }
    }

    /**
     * Returns once this trace's thread, still running, has passed a safepoint, so that it has
     * stored every word below the position read before. A probe stores its word and then its
     * position, but the JIT may emit the position's store first (they are independent stores), and
     * the thread can be descheduled between the two: the final flush would then copy a word not
     * yet stored (docs/recorder-cost.md, "Path ends, and the kernel's floor, measured"). At a
     * safepoint the heap
     * holds every store that comes before it in program order. Asking for the thread's stack trace
     * makes it reach one (a safepoint operation on JDK 17, a handshake with that thread on later
     * JDKs). The thread cannot hand its buffer over meanwhile: flush waits for this object's lock,
     * which {@link #finish} holds.
     */
    private void settle() {
        if (thread == Thread.currentThread()) {
            return;
        }
        try {
            thread.getStackTrace();
        } catch (Throwable e) {
            // Without it, the flush copies what it sees, as before.
        }
    }

    /**
     * {@code {words kept, words of loop records, events they stand for}} among {@code w[0, n)}; the
     * words kept end before a loop record that does not fit (see {@link #finish}).
     */
    static int[] loopCounts(int[] w, int n) {
        int recordWords = 0;
        int events = 0;
        int i = 0;
        while (i < n) {
            int x = w[i];
            if ((x >>> EventLayout.TYPE_SHIFT) != EventLayout.TYPE_EXTENDED
                    || ((x >>> EventLayout.SUBTYPE_SHIFT) & 7) != EventLayout.EXT_LOOP
                    || (x & EventLayout.LOOP_CYCLE_FLAG) != 0) {
                i++;
                continue;
            }
            if (i + 2 >= n) {
                return new int[] {i, recordWords, events};
            }
            int steps = x & EventLayout.LOOP_STEPS_MAX;
            int back = (x >>> EventLayout.LOOP_STEPS_BITS) & 63;
            int mask = w[i + 2] & (EventLayout.LOOP_CYCLE_FLAG - 1);
            int call = i + 3 < n ? w[i + 3] : 0;
            boolean calls = (call >>> EventLayout.TYPE_SHIFT) == EventLayout.TYPE_EXTENDED
                    && ((call >>> EventLayout.SUBTYPE_SHIFT) & 7) == EventLayout.EXT_LOOP_CALL;
            int k = calls ? (call & EventLayout.VALUE_MASK) >>> EventLayout.METHOD_BITS : 0;
            int size = calls ? 4 : 3;
            if (calls && i + 4 < n && EventLayout.isLoopPath(w[i + 4])) {
                k |= (w[i + 4] & (EventLayout.LOOP_PATH_FLAG - 1)) << EventLayout.LOOP_CALL_PATH_SHIFT;
                size = 5;
            }
            recordWords += size;
            events += EventLayout.loopEvents(steps, back, mask, k, calls ? 1 : 0);
            i += size;
        }
        return new int[] {n, recordWords, events};
    }

    /**
     * Takes back what this thread recorded since {@code mark} (Tracer.loopMark), but class loads:
     * the events of an implicit exception's constructor that ran inside a leaf's body written in
     * place on a loop's cycle (Tracer.leafThrew), which the real call about to be made records
     * again, in its place. Nothing else is recorded on a cycle. Returns false, and takes nothing
     * back, when the buffer was handed over since the mark (the log says so).
     */
    boolean retract(int mark) {
        int at = mark & MARK_POSITION;
        int p = pos;
        if ((mark >>> MARK_SHIFT) != (handoffs & MARK_EPOCHS) || at > p || closed) {
            if (!closed) {
                guard++;
                try {
                    TraceSink.current().log("warning: thread " + index + ": the events of an exception thrown in a leaf"
                            + " written in place on a loop's cycle were handed over before its real call; they stay (mark "
                            + at + " of buffer " + (mark >>> MARK_SHIFT) + ", now " + p + " of buffer " + (handoffs & MARK_EPOCHS) + ")");
                } catch (Throwable ignored) {
                    // Only the warning is lost.
                } finally {
                    guard--;
                }
            }
            return false;
        }
        int[] taken = loopCounts(java.util.Arrays.copyOfRange(buf, at, p), p - at);
        recordWords -= taken[1];
        represented -= taken[2];
        int kept = at;
        for (int i = at; i < p; i++) {
            int w = buf[i];
            if ((w >>> EventLayout.SUBTYPE_SHIFT) == EventLayout.EXT_CLASS_LOAD) {  // type 0, subtype 0
                buf[kept++] = w;
            }
        }
        pos = kept;
        return true;
    }

    private boolean finished;

    /**
     * True the first time only: the writer's reaper (a dead thread) and the final flush may both
     * reach a thread, and its stream and end record must be finished once.
     */
    public synchronized boolean markFinished() {
        if (finished) {
            return false;
        }
        finished = true;
        return true;
    }

    public long lostEvents() {
        return lost;
    }

    /**
     * Drops the classes this thread's caches hold (the last receiver's class and the receivers'
     * ids), which would otherwise keep a class loader the program has dropped from being unloaded
     * (tests/programs/unloading). The writer calls it now and then (TraceWriter.housekeeping),
     * racing with this thread, which at worst looks a class up again: only this thread writes the
     * ids and lastWord, so a key or lastClass it still finds goes with its own id or word.
     */
    public void forgetClasses() {
        lastClass = null;
        Class<?>[] keys = receiverKeys;
        if (keys != null) {
            for (int i = 0; i < keys.length; i++) {
                keys[i] = null;
            }
        }
    }

    /** The class id of a receiver's class, from a small per-thread cache. */
    int classId(Class<?> c) {
        int h = System.identityHashCode(c) & (RECEIVER_CACHE - 1);
        if (receiverKeys[h] == c) {
            return receiverIds[h];
        }
        return classIdSlow(c, h);
    }

    @DontInline
    private int classIdSlow(Class<?> c, int h) {
        guard++;
        try {
            int id = ClassRegistry.idOf(c);
            receiverIds[h] = id;
            receiverKeys[h] = c;
            return id;
        } catch (Throwable e) {
            return 0;
        } finally {
            guard--;
        }
    }
}
