package jbgui.runtime;

import jdk.internal.vm.annotation.DontInline;
import jdk.internal.vm.annotation.Stable;

/**
 * The static entry points that instrumented code calls. Each must be cheap, must never throw
 * into the program, and must record nothing while the tracer itself runs on the thread.
 *
 * <p>The probe protocol (see jbgui.instr.ProbeInserter): at method entry
 * {@code ThreadTrace t = enter(start)} (or {@link #enterInstance} with {@code this}; never null,
 * a closed trace where nothing may be recorded: ThreadTrace.sink); at each
 * basic block {@code block(t, start, index)} or {@code blockChecked(t, start, index)}; before each return {@code exit(t, start)}; in a
 * catch-all handler around the body {@code exceptionExit(throwable, t, start)}, then rethrow.
 * A leaf method (jbgui.instr.LeafMethods) has only {@code leaf(start)} (or {@code leaf(start,
 * this)}) at entry, which records its start and end at once.
 * {@code start} is the method's start event word, from which the others follow (EventLayout).
 */
public final class Tracer {
    private Tracer() {}

    /** False before the engine has finished starting and after the final flush. */
    static volatile boolean active;

    private static final boolean END = Config.recordMethodEnd;
    private static final boolean BLOCKS = Config.recordBlocks;
    private static final boolean EXCEPTION_EXIT = Config.recordExceptionExit;
    private static final boolean CLASS_LOAD = Config.recordClassLoad;
    private static final boolean BLOCKING_STAMPS = Config.blockingStamps && Config.mode != 1;

    // Which compiler inlines the probes. HotSpot's C1 inlines a method of at most MaxInlineSize
    // (35 bytes of bytecode) wherever it is called; C2 also inlines larger ones, up to
    // FreqInlineSize (325 bytes), where the call is hot. The probes the instrumented code calls
    // are each larger than 35 bytes: they do their buffer work themselves rather than through
    // ThreadTrace's helpers, and the entry probes look the thread up themselves. So C1's code (the
    // profiled tier-3 code every method runs in before C2 compiles it) makes a plain static call
    // per probe, and C2 inlines them where they run often. Measured on traced javac (paired timing,
    // 5 alternating pairs each, against the agent of commit fb97dea, whose probes were all within
    // 35 bytes and whose block probes all tested for a full buffer): with the untested block
    // probes but every probe still within 35 bytes, 1.031 of that agent's CPU; with the probes
    // left to C2 as here, 0.836 of its wall time (15.25 s against 18.06 s). C1 inlined every
    // probe's store with its profiling into every method it compiled, which made its code, and C2's work,
    // larger, and C2's compilations were most of a traced run's CPU. The helpers they call
    // (ThreadTrace.put, start, …) stay within 35 bytes, so C2 inlines a probe whole.
    // Their slow paths are @DontInline (jdk.internal.vm.annotation, honoured in the boot loader's
    // classes): see jbgui.agent.build.JDK_INTERNAL_SOURCES. @ForceInline on the fast paths was
    // measured and left out: C1 then inlined every buffer store, with its profiling, into every
    // probe (C1 code 32 MB instead of 21, traced javac's process CPU up by a third).
    // tests/agent/test_probe_inlining.py holds both sizes.

    private static final boolean START = Config.recordMethodStart;
    private static final boolean RECEIVER = START && Config.recordReceiver;

    // The entry probes' fast path stores the start word (and a receiver word it knows) when the
    // thread is found in ThreadRegistry.FAST, records, and has room; everything else (a thread
    // registering or guarded, a full buffer, a receiver class to look up, mode 1, whose buffer
    // holds one word) goes to enterSlow, the one call C2 compiles into the caller per probe.
    // Against a call per case (the thread's lookup, the buffer's hand-over, the class lookup and
    // the identity hash behind it), level=method javac took 0.893 of the wall time with the
    // own-class mark and the one-entry cache below, 0.969 with the cache alone (paired timing, 4
    // pairs each; docs/recorder-cost.md).

    public static ThreadTrace enter(int event) {
        Thread me = Thread.currentThread();
        ThreadTrace t = ThreadRegistry.FAST[(int) ThreadObjects.id(me) & (ThreadRegistry.FAST_SLOTS - 1)];
        int p;
        if (START && t.thread == me && t.guard == 0 && (p = t.pos) < t.limit - 1) {
            ThreadObjects.store(t.buf, p, event);
            t.pos = p + 1;
            return t;
        }
        return enterSlow(event, null);
    }

    /**
     * An instance method's start and its receiver's class. A receiver of the method's own class
     * ({@link #owner}) is recorded as a mark in the start word, EventLayout.START_RECEIVER_OWN,
     * instead of a receiver word; one of the method's usual class ({@link #usual}) or of the class
     * of the thread's last looked-up receiver as that class's word; the rest are looked up in
     * enterSlow.
     */
    public static ThreadTrace enterInstance(int event, Object self) {
        Thread me = Thread.currentThread();
        ThreadTrace t = ThreadRegistry.FAST[(int) ThreadObjects.id(me) & (ThreadRegistry.FAST_SLOTS - 1)];
        int p;
        if (START && t.thread == me && t.guard == 0 && (p = t.pos) < t.limit - 2) {
            int[] b = t.buf;
            if (!RECEIVER) {
                ThreadObjects.store(b, p, event);
                t.pos = p + 1;
                return t;
            }
            Class<?> c = self.getClass();
            if (c == owner(event)) {
                ThreadObjects.store(b, p, event | EventLayout.START_RECEIVER_OWN);
                t.pos = p + 1;
                return t;
            }
            Usual u = usual(event);
            if (u != null) {
                if (c == u.type) {
                    ThreadObjects.store(b, p, event);
                    ThreadObjects.store(b, p + 1, u.word);
                    t.pos = p + 2;
                    return t;
                }
                if (c == u.second) {
                    ThreadObjects.store(b, p, event);
                    ThreadObjects.store(b, p + 1, u.secondWord);
                    t.pos = p + 2;
                    return t;
                }
            }
            if (c == t.lastClass) {
                ThreadObjects.store(b, p, event);
                ThreadObjects.store(b, p + 1, t.lastWord);
                t.pos = p + 2;
                return t;
            }
        }
        return enterSlow(event, self);
    }

    // A leaf method (jbgui.instr.LeafMethods: it calls nothing and cannot throw) has one probe, at
    // entry, that stores its start and its end together: the words enter and exit would store, in
    // the same order. The end word is the start's without its marks, plus END_FROM_START.

    /** A static leaf method's start and end; {@code event} is its start word, perhaps marked START_ENTRY_IMPLIED. */
    public static void leaf(int event) {
        Thread me = Thread.currentThread();
        ThreadTrace t = ThreadRegistry.FAST[(int) ThreadObjects.id(me) & (ThreadRegistry.FAST_SLOTS - 1)];
        int p;
        if (START && END && t.thread == me && t.guard == 0 && (p = t.pos) < t.limit - 2) {
            int[] b = t.buf;
            ThreadObjects.store(b, p, event);
            ThreadObjects.store(b, p + 1, endOfLeaf(event));
            t.pos = p + 2;
            return;
        }
        leafSlow(event, null);
    }

    /** An instance leaf method's start, receiver and end (see {@link #enterInstance}). */
    public static void leaf(int event, Object self) {
        Thread me = Thread.currentThread();
        ThreadTrace t = ThreadRegistry.FAST[(int) ThreadObjects.id(me) & (ThreadRegistry.FAST_SLOTS - 1)];
        int p;
        if (START && END && RECEIVER && t.thread == me && t.guard == 0 && (p = t.pos) < t.limit - 3) {
            int[] b = t.buf;
            Class<?> c = self.getClass();
            if (c == owner(event)) {
                ThreadObjects.store(b, p, event | EventLayout.START_RECEIVER_OWN);
                ThreadObjects.store(b, p + 1, endOfLeaf(event));
                t.pos = p + 2;
                return;
            }
            Usual u = usual(event);
            if (u != null) {
                if (c == u.type) {
                    ThreadObjects.store(b, p, event);
                    ThreadObjects.store(b, p + 1, u.word);
                    ThreadObjects.store(b, p + 2, endOfLeaf(event));
                    t.pos = p + 3;
                    return;
                }
                if (c == u.second) {
                    ThreadObjects.store(b, p, event);
                    ThreadObjects.store(b, p + 1, u.secondWord);
                    ThreadObjects.store(b, p + 2, endOfLeaf(event));
                    t.pos = p + 3;
                    return;
                }
            }
            if (c == t.lastClass) {
                ThreadObjects.store(b, p, event);
                ThreadObjects.store(b, p + 1, t.lastWord);
                ThreadObjects.store(b, p + 2, endOfLeaf(event));
                t.pos = p + 3;
                return;
            }
        }
        leafSlow(event, self);
    }

    // The methods' own classes, by method id, in pages: what an instance method's receiver is
    // compared with for START_RECEIVER_OWN. The probes used to pass the class as a constant (ldc
    // of this_class), but HotSpot's interpreter calls into the VM for every ldc of a class, even a
    // resolved one (JDK 17, TemplateTable::ldc): 2.3% of the samples of a traced jEdit start-up,
    // which runs mostly interpreted. Here the interpreter reads two arrays, and C2 folds both reads
    // into a constant (@Stable, honoured in the boot loader's classes) once they are filled, as
    // the constant was. A class's slots are filled on the slow path, the first time a receiver of
    // that class reaches it (ownerSeen); until then such receivers get their word. Slots are
    // written once, under the lock, and only with classes that are never unloaded
    // (ClassRegistry.methods), since this table holds them strongly.
    private static final int OWNER_PAGE_BITS = 10;
    private static final int OWNER_PAGE_MASK = (1 << OWNER_PAGE_BITS) - 1;
    @Stable
    private static final Class<?>[][] OWNERS = new Class<?>[(EventLayout.MAX_METHOD_ID >>> OWNER_PAGE_BITS) + 1][];

    /** The class of the method whose start word is {@code event}, when its slot is filled; else null. */
    private static Class<?> owner(int event) {
        int m = (event >>> EventLayout.METHOD_SHIFT) & EventLayout.MAX_METHOD_ID;
        Class<?>[] page = OWNERS[m >>> OWNER_PAGE_BITS];
        return page == null ? null : page[m & OWNER_PAGE_MASK];
    }

    /**
     * The slow path met a receiver of class {@code c} (class id {@code classId}): fills the slots
     * of the methods {@code c} declares, if it has any listed (ClassRegistry.methods), so that
     * their receivers of exactly that class take the fast path from now on, whichever method the
     * receiver came to now (an inherited one too: the fast path's cache of the last receiver's
     * class would otherwise keep such a class from ever reaching here in its own methods).
     */
    static void ownerSeen(Class<?> c, int classId) {
        int first = ClassRegistry.firstMethod(classId);
        if (first <= 0 || first > EventLayout.MAX_METHOD_ID) {
            return;
        }
        Class<?>[] known = OWNERS[first >>> OWNER_PAGE_BITS];
        if (known != null && known[first & OWNER_PAGE_MASK] != null) {
            return;
        }
        int end = Math.min(first + ClassRegistry.methodCount(classId), EventLayout.MAX_METHOD_ID + 1);
        synchronized (OWNERS) {
            for (int id = first; id < end; id++) {
                Class<?>[] page = OWNERS[id >>> OWNER_PAGE_BITS];
                if (page == null) {
                    page = new Class<?>[1 << OWNER_PAGE_BITS];
                    OWNERS[id >>> OWNER_PAGE_BITS] = page;
                }
                if (page[id & OWNER_PAGE_MASK] == null) {
                    page[id & OWNER_PAGE_MASK] = c;
                }
            }
        }
    }

    // Each instance method's usual receiver classes, by method id, in pages like OWNERS: the first
    // two receivers not of the method's own class that reached the slow path (of classes that live
    // as long as the JVM: the table holds them strongly), with their receiver words. Set once
    // each, so C2 folds a method's slot, page and fields (all @Stable) into constants where the
    // probe is inlined: the fast path compares the receiver's class with constants and stores a
    // constant word, no load. They come before the thread's last class, which still catches what
    // they miss. Counted on a level=method javac trace (benchmarks/receiver_cache.py): of 142.0 M
    // receivers not of their method's own class, 15.4% missed the first usual class and the
    // thread's last and reached the slow path (ThreadTrace.startInstance with its class lookup,
    // 7% of the program thread's JFR samples), 7.7% miss the two usual classes and the thread's
    // last. Two threads may set a slot at once: each Usual is one immutable object, so whichever
    // a compiled probe folded and whichever later readers see, its classes go with their words.

    /**
     * A method's usual receiver classes, the first and the second, each with its word
     * (EventLayout.EXT_RECEIVER with its class id); {@code second} null until the slow path meets
     * another lasting class in the method. {@code settled}: nothing more will be set.
     */
    static final class Usual {
        @Stable
        final Class<?> type;
        @Stable
        final int word;
        @Stable
        final Class<?> second;
        @Stable
        final int secondWord;
        final boolean settled;

        Usual(Class<?> type, int word, Class<?> second, int secondWord, boolean settled) {
            this.type = type;
            this.word = word;
            this.second = second;
            this.secondWord = secondWord;
            this.settled = settled;
        }
    }

    private static final Usual NO_USUAL = new Usual(null, 0, null, 0, true);
    @Stable
    private static final Usual[][] USUAL = new Usual[(EventLayout.MAX_METHOD_ID >>> OWNER_PAGE_BITS) + 1][];

    /** The usual receiver of the method whose start word is {@code event}, when its slot is set; else null. */
    private static Usual usual(int event) {
        int m = (event >>> EventLayout.METHOD_SHIFT) & EventLayout.MAX_METHOD_ID;
        Usual[] page = USUAL[m >>> OWNER_PAGE_BITS];
        return page == null ? null : page[m & OWNER_PAGE_MASK];
    }

    /**
     * The slow path looked up receiver class {@code c} (its word {@code word}) in the method whose
     * start word is {@code event}: it becomes the method's usual class if the method has none yet
     * and the class is never unloaded. {@code t} is guarded meanwhile: the JDK code this runs is
     * traced code.
     */
    static void receiverSeen(ThreadTrace t, int event, Class<?> c, int word) {
        int m = (event >>> EventLayout.METHOD_SHIFT) & EventLayout.MAX_METHOD_ID;
        Usual[] page = USUAL[m >>> OWNER_PAGE_BITS];
        Usual known = page == null ? null : page[m & OWNER_PAGE_MASK];
        if (known != null && (known.settled || known.type == c)) {
            return;
        }
        t.guard++;
        try {
            // A class that may be unloaded is never one (the table holds it strongly): a method
            // whose first such receiver is one gets no usual class (a slot that matches no
            // class), one whose second is one keeps its first alone, rather than asking every
            // later slow path again.
            boolean lasting = ClassRegistry.lasting(c);
            synchronized (USUAL) {
                page = USUAL[m >>> OWNER_PAGE_BITS];
                if (page == null) {
                    page = new Usual[1 << OWNER_PAGE_BITS];
                    USUAL[m >>> OWNER_PAGE_BITS] = page;
                }
                Usual u = page[m & OWNER_PAGE_MASK];
                if (u == null) {
                    page[m & OWNER_PAGE_MASK] = lasting ? new Usual(c, word, null, 0, false) : NO_USUAL;
                } else if (!u.settled && u.type != c) {
                    // The slot changes once more: code compiled with the first object folded
                    // keeps it (a class with its word either way), later compilations fold this.
                    page[m & OWNER_PAGE_MASK] = lasting ? new Usual(u.type, u.word, c, word, true)
                            : new Usual(u.type, u.word, null, 0, true);
                }
            }
        } finally {
            t.guard--;
        }
    }

    private static int endOfLeaf(int event) {
        return (event & ~EventLayout.START_ENTRY_IMPLIED) + EventLayout.END_FROM_START;
    }

    /** The leaf probes' other cases: what enter (or enterInstance) and exit would do. */
    @DontInline
    private static void leafSlow(int event, Object self) {
        exit(enterSlow(event, self), event & ~EventLayout.START_ENTRY_IMPLIED);
    }

    /** The entry probes' other cases (see above); {@code self} is null for a static method or constructor. */
    @DontInline
    private static ThreadTrace enterSlow(int event, Object self) {
        ThreadTrace t = ThreadRegistry.current();
        if (t != null && t.guard == 0) {
            if (self == null) {
                t.start(event);
            } else {
                t.startInstance(event, self);
            }
            return t;
        }
        return t == null ? ThreadTrace.DISCARD : t.sink();
    }

    /**
     * A block, without testing for a full buffer (ThreadTrace.putUnchecked, written out here);
     * {@code t} is what enter returned, never null (ThreadTrace.DISCARD records nothing).
     * jbgui.instr.ProbeInserter uses it where at most EventLayout.UNCHECKED_RUN_MAX blocks can run
     * before the next test. Mode 1 passes every event on (ThreadTrace.put).
     */
    public static void block(ThreadTrace t, int start, int index) {
        if (BLOCKS) {
            int event = start + EventLayout.BLOCK_FROM_START + index;
            if (ThreadTrace.SHARED) {
                t.put(event);
                return;
            }
            int p = t.pos;
            ThreadObjects.store(t.buf, p, event);
            t.pos = p + 1;
        }
    }

    /** A block that tests for a full buffer (ThreadTrace.put, written out here): a loop's head, a handler, a block of a long method. */
    public static void blockChecked(ThreadTrace t, int start, int index) {
        if (BLOCKS) {
            int p = t.pos;
            ThreadObjects.store(t.buf, p, start + EventLayout.BLOCK_FROM_START + index);
            if ((t.pos = p + 1) >= t.limit) {
                t.overflow();
            }
        }
    }

    /**
     * A loop's header (jbgui.instr.LoopCycles): one more step of the loop, counted in the frame's
     * local instead of stored. Near the limit the record is stored and counting starts again with
     * this step ({@link #loopFull}). Returns the new count. {@code call} and {@code leaf}: the static
     * leaf called on the cycle (its block's offset and its start word), or 0 and 0.
     *
     * <p>Within HotSpot's MaxInlineSize (35 bytes of bytecode), so that both compilers inline it
     * wherever it is: C2 inlines a larger method only where it rates the call hot, and in the
     * compute kernel's sieve, a loop run 2 M steps in a method called 60 times, it did not
     * (-XX:+PrintInlining: "too big"), so every step of the loop made a call.
     */
    public static int loopHead(ThreadTrace t, int start, int steps, int header, int back, int mask, int call, int leaf) {
        return steps < LOOP_HEAD_LIMIT ? steps + 1 : loopFull(t, start, steps, header, back, mask, call, leaf);
    }

    /**
     * The steps a record holds at most, less the cycle's other blocks (fewer than LOOP_SPAN_MAX),
     * which count on after the header: a thirty-second of LOOP_STEPS_MAX, so that a record with a
     * leaf's call (a step and a call of at most jbgui.instr.PureLeaves.MAX_BLOCKS blocks: 13
     * events a step at most) stays within LOOP_REPRESENTED_MAX, and so that the constant fits a
     * {@code sipush} where jbgui.instr.ProbeInserter writes the header's probe out; the same for
     * every loop, so that {@link #loopHead} tests one constant.
     */
    public static final int LOOP_HEAD_LIMIT = (EventLayout.LOOP_STEPS_MAX >> 5) - EventLayout.LOOP_SPAN_MAX;

    /**
     * {@link #loopHead} at the limit, or a loop header's probe written out at its limit
     * (jbgui.instr.ProbeInserter): the record stored, and this step the first of the next.
     */
    @DontInline
    public static int loopFull(ThreadTrace t, int start, int steps, int header, int back, int mask, int call, int leaf) {
        t.putLoop(steps, start + EventLayout.BLOCK_FROM_START + header, back, mask, call, leaf);
        return 1;
    }

    /**
     * Where a loop's pending record belongs should the loop be left by an exception
     * (ThreadTrace.mark): taken when a record begins (a count of 1, after {@link #loopHead}), and
     * {@code mark} kept otherwise, so that the steps in between read no field.
     */
    public static int loopMark(ThreadTrace t, int steps, int mark) {
        return steps == 1 ? t.mark() : mark;
    }

    /**
     * Where a loop is left (a block it exits to): its pending steps' record, if any. Up to three
     * steps of a loop without a call are stored as their block words, which take no more room than
     * a record and need no expanding (a loop whose test failed at once, or that ran once).
     */
    public static void loopExit(ThreadTrace t, int start, int steps, int header, int back, int mask, int call, int leaf) {
        if (steps != 0) {
            loopStore(t, start, steps, header, back, mask, call, leaf);
        }
    }

    /**
     * {@link #loopExit} with steps pending. Apart, so that loopExit stays within MaxInlineSize
     * (35 bytes) and both compilers inline its test wherever it is: an exit that a loop's every
     * step passes with no steps pending (the sieve's inner loop, left at each step of the outer
     * one) would otherwise be a call per step wherever C2 rates the call cold, as it does where it
     * compiled a method on a profile taken before that loop's later blocks ran (the sieve, whose
     * on-stack replacement begins inside its first inner loop).
     */
    static void loopStore(ThreadTrace t, int start, int steps, int header, int back, int mask, int call, int leaf) {
        if (steps <= 3 && leaf == 0) {
            t.putSteps(steps, start + EventLayout.BLOCK_FROM_START + header, back, mask);
        } else {
            t.putLoop(steps, start + EventLayout.BLOCK_FROM_START + header, back, mask, call, leaf);
        }
    }

    /**
     * A block of a loop's cycle that a step may also reach from off the cycle (a join,
     * jbgui.instr.LoopCycles): with a record pending ({@code steps} not 0) one more step, counted;
     * otherwise the step began off the cycle, its blocks up to the header are recorded as blocks,
     * and counting starts again there. Returns the new count.
     */
    public static int loopJoin(ThreadTrace t, int start, int steps, int index) {
        if (steps != 0) {
            return steps + 1;
        }
        if (BLOCKS) {
            t.put(start + EventLayout.BLOCK_FROM_START + index);
        }
        return 0;
    }

    /**
     * A leaf of several blocks written in place on a loop's cycle (jbgui.instr.LeafInPlace) took
     * another path ({@code path}: the call's k and that path) than the pending record's calls
     * ({@code call}), which stand for the steps before this one: they are stored, then this
     * step's {@code q} blocks from the header to the call's block and the call's own events, as
     * words. Returns the new count, 0: the step goes on off the record (the cycle's blocks after
     * the call's are joins, Tracer.loopJoin), and the next record's first call sets its path. So
     * a rare path (the sieve's prime) costs its step's words and leaves the record's path as it
     * was; a path that changes for good costs one step.
     */
    @DontInline
    public static int leafOffPath(ThreadTrace t, int start, int steps, int q, int path, int header, int back, int mask,
                                  int call, int leaf) {
        loopExit(t, start, steps - q, header, back, mask, call, leaf);
        putStepBlocks(t, start, q, header, back, mask);
        if (START && END) {
            t.put(leaf | EventLayout.START_ENTRY_IMPLIED);
            if (BLOCKS) {
                int blocks = (path >>> EventLayout.LOOP_CALL_PATH_SHIFT) & -2;   // block 0: implied by the start
                while (blocks != 0) {
                    t.put(leaf + EventLayout.BLOCK_FROM_START + Integer.numberOfTrailingZeros(blocks));
                    blocks &= blocks - 1;
                }
            }
            t.put(leaf + EventLayout.END_FROM_START);
        }
        return 0;
    }

    /** The block words of a step's first {@code q} blocks of the cycle, from the header on. */
    private static void putStepBlocks(ThreadTrace t, int start, int q, int header, int back, int mask) {
        if (BLOCKS) {
            int lo = start + EventLayout.BLOCK_FROM_START + header - back;
            int k = back;
            for (int s = 0; s < q; s++) {
                t.put(lo + k);
                int higher = mask & -(2 << k);   // the cycle's blocks after block lo + k
                k = Integer.numberOfTrailingZeros(higher != 0 ? higher : mask);
            }
        }
    }

    /**
     * A step's call of a leaf written in place on a loop's cycle, when no record is pending (the
     * step began off the cycle and rejoined it before the call's block, Tracer.loopJoin): the
     * record will not stand for this call, so its events are stored here, as the leaf's probe
     * would have (its start with its block implied, its end). A one-block leaf.
     */
    public static void leafOffCycle(ThreadTrace t, int steps, int leaf) {
        if (steps == 0 && START && END) {
            t.put2(leaf | EventLayout.START_ENTRY_IMPLIED, leaf + EventLayout.END_FROM_START);
        }
    }

    /**
     * An implicit exception (an array index, a division, a null) thrown in the body of a leaf
     * written in place on a loop's cycle, caught around that body: what the exception's
     * constructor recorded since the record's {@code mark} is taken back (ThreadTrace.retract),
     * the record's complete steps are stored, then this step's {@code q} blocks from the header to
     * the call's block as block words; the caller then makes the real call, which throws the same
     * exception with the leaf's frame in its stack trace and records its events in their place.
     * Returns the new count, 0: the step goes on off the record (its blocks after the call's are
     * joins, Tracer.loopJoin).
     */
    @DontInline
    public static int leafThrew(ThreadTrace t, int start, int steps, int mark, int q, int header, int back, int mask,
                                int call, int leaf) {
        if (t == null || steps < q) {
            return 0;
        }
        t.retract(mark);
        loopExit(t, start, steps - q, header, back, mask, call, leaf);
        putStepBlocks(t, start, q, header, back, mask);
        return 0;
    }

    /** The exception-exit handler: a loop's pending steps' record, before the exception's own events. */
    @DontInline
    public static void loopThrown(ThreadTrace t, int start, int steps, int mark, int header, int back, int mask, int call,
                                  int leaf) {
        if (steps != 0 && t != null) {
            t.putLoopAt(mark, steps, start + EventLayout.BLOCK_FROM_START + header, back, mask, call, leaf);
        }
    }

    /** Before a return: the method's end (ThreadTrace.put, written out here), which tests for a full buffer. */
    public static void exit(ThreadTrace t, int start) {
        if (END) {
            int p = t.pos;
            ThreadObjects.store(t.buf, p, start + EventLayout.END_FROM_START);
            if ((t.pos = p + 1) >= t.limit) {
                t.overflow();
            }
        } else {
            t.check(); // the blocks' bound holds whatever events are chosen
        }
    }

    @DontInline
    public static void exceptionExit(Throwable thrown, ThreadTrace t, int start) {
        if (EXCEPTION_EXIT && t != null && !t.closed) {
            int classId = thrown == null ? 0 : t.classId(thrown.getClass());
            t.put2(EventLayout.exceptionExitFromStart(start), EventLayout.extended(EventLayout.EXT_THROWABLE, classId));
        }
    }

    /**
     * Stamps the clock just before a call that may block (sleep, wait, park, blocking I/O; see
     * jbgui.instr.BlockingCalls): an exact clock sample at the thread's current event position,
     * so that the blocked time is known exactly instead of spread over a buffer's events.
     */
    @DontInline
    public static void blockingEnter(ThreadTrace t) {
        if (BLOCKING_STAMPS && t != null) {
            t.stamp(false);
        }
    }

    /** Stamps the clock when a call that may block has returned (see {@link #blockingEnter}). */
    @DontInline
    public static void blockingExit(ThreadTrace t) {
        if (BLOCKING_STAMPS && t != null) {
            t.stamp(true);
        }
    }

    /**
     * Reads the clock just before a {@code monitorenter} (a synchronized block): kept, not
     * recorded, until {@link #monitorEntered} knows whether the thread had to wait for the lock.
     */
    public static void monitorEnter(ThreadTrace t) {
        if (BLOCKING_STAMPS && t != null) {
            t.lockNanos = System.nanoTime();
        }
    }

    /**
     * After a {@code monitorenter}: a pair of blocking stamps when it took long enough to have
     * waited (ThreadTrace.CONTENDED_NANOS), else nothing.
     */
    public static void monitorEntered(ThreadTrace t) {
        if (BLOCKING_STAMPS && t != null) {
            t.entered();
        }
    }

    /**
     * The runtime class of that name, or null for any other name. Called first thing by every
     * {@code loadClass(String)} (jbgui.instr.LoaderPrologue): an instrumented class names
     * Tracer and ThreadTrace in its constant pool, and the JVM resolves them through the class's
     * defining loader. With this answer the loader's own code never runs for them, so a program's
     * class loader sees no request the untraced program would not make, and nothing is recorded.
     */
    public static Class<?> runtimeClass(String name) {
        // The comparisons run JDK code, which is traced: guard the thread while they run.
        if (name == null) {
            return null;
        }
        ThreadTrace t = ThreadRegistry.current();
        if (t != null) {
            t.guard++;
        }
        try {
            if (!name.startsWith("jbgui.runtime.")) {
                return null;
            }
            if (name.equals("jbgui.runtime.Tracer")) {
                return Tracer.class;
            }
            if (name.equals("jbgui.runtime.ThreadTrace")) {
                return ThreadTrace.class;
            }
            return null;
        } finally {
            if (t != null) {
                t.guard--;
            }
        }
    }

    /**
     * A class was loaded on this thread. Called by the transformer, which has guarded the thread
     * ({@code t} is its guard token): the load is the program's only when no guard but the
     * transformer's own and the agent hook's is up; loads the tracer caused are not recorded.
     */
    public static void classLoaded(ThreadTrace t, int classId) {
        if (CLASS_LOAD && programsLoad(t)) {
            t.put(EventLayout.extended(EventLayout.EXT_CLASS_LOAD, classId));
        }
    }

    /**
     * Whether the load the transformer runs for (its guard token {@code t}) is the program's own:
     * recording, and no guard up on the thread but the transformer's and the agent hook's.
     */
    private static boolean programsLoad(ThreadTrace t) {
        return active && t != null && !t.closed && t.guard - 1 == t.hookDepth;
    }

    /**
     * The transformer took this long with the program's thread waiting for it: a class load
     * worth timing exactly (ThreadTrace.CONTENDED_NANOS, the same as a contended lock).
     */
    private static final long SLOW_TRANSFORM_NANOS = ThreadTrace.CONTENDED_NANOS;

    /**
     * The transformer has finished a class the program's thread is loading (it began at
     * {@code began}; {@code t} is its guard token): when that took long enough to matter, two
     * exact clock samples at the thread's position, so that the time went into a step there
     * instead of being spread over the events since the last sample. Loading and instrumenting a
     * class records no event, and a cold one takes milliseconds: spread by interpolation, it made
     * a 200 ms sleep right after one last 202 ms in the merged tree
     * (tests/recorder/test_blocking_times.py), depending on where buffers happened to be handed over.
     */
    public static void transformed(ThreadTrace t, long began) {
        if (!BLOCKING_STAMPS || !programsLoad(t)) {
            return;
        }
        long now = System.nanoTime();
        if (now - began >= SLOW_TRANSFORM_NANOS) {
            long position = t.position();
            int extra = t.loopExtra();
            TraceSink.current().exactSample(t.index, position, began, extra);
            TraceSink.current().exactSample(t.index, position, now, extra);
        }
    }

    /**
     * Entered by the agent machinery (the JDK's InstrumentationImpl.transform, hooked at start-up)
     * so that the JDK code it runs before reaching our transformer is not traced.
     */
    public static void agentEnter() {
        ThreadTrace t = ThreadRegistry.current();
        if (t != null && t.thread != null) {
            t.guard++;
            t.hookDepth++;
        }
    }

    public static void agentExit() {
        ThreadTrace t = ThreadRegistry.current();
        if (t != null && t.thread != null && t.hookDepth > 0) {
            t.guard--;
            t.hookDepth--;
        }
    }

    /** Guards the calling thread (the engine's start-up on the main thread); returns a token for {@link #unguard}. */
    public static ThreadTrace guardCurrentThread() {
        ThreadTrace t = ThreadRegistry.current();
        if (t != null && t.thread != null) {
            t.guard++;
            return t;
        }
        return null;
    }

    public static void unguard(ThreadTrace t) {
        if (t != null) {
            t.guard--;
        }
    }

    public static void setActive(boolean on) {
        active = on;
    }

    public static boolean isActive() {
        return active;
    }

    /** Position of the shared stream (mode 1). */
    public static long sharedPosition() {
        return SharedStream.position();
    }

    public static void finishShared() {
        SharedStream.finish();
    }
}
