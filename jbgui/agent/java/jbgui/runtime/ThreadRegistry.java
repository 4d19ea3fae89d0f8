package jbgui.runtime;

import jdk.internal.vm.annotation.DontInline;

import java.util.ArrayList;
import java.util.List;

/**
 * Maps a thread to its {@link ThreadTrace} without running any instrumented code.
 *
 * <p>Instrumented JDK methods call the tracer, so the lookup on that path may only use arrays,
 * {@code Thread.currentThread()} and {@code System.identityHashCode} (both native): a
 * {@code ThreadLocal} would run instrumented JDK code and recurse. The table is open-addressed on
 * the thread's identity hash; a thread only ever looks up its own entry, which it inserted itself,
 * so readers need no lock. Inserts, growth and removal of dead threads take {@link #LOCK} and
 * publish a whole new {@link Table} through a volatile field.
 */
public final class ThreadRegistry {
    private ThreadRegistry() {}

    private static final class Table {
        final Thread[] keys;
        /** Parallel to keys; {@link ThreadTrace#EMPTY} where no thread is, never null. */
        final ThreadTrace[] values;
        int size;

        Table(int capacity) {
            keys = new Thread[capacity];
            values = new ThreadTrace[capacity];
            java.util.Arrays.fill(values, ThreadTrace.EMPTY);
        }
    }

    private static final Object LOCK = new Object();
    private static volatile Table table = new Table(256);
    private static int nextIndex = 1;

    /**
     * Registered threads by {@code Thread.tid} modulo its length, for {@link #current}'s fast
     * path; EMPTY where none (never null), slot 0 unused. A slot keeps the first thread that
     * claims it; the others (ids that collide, beyond 4095 threads) take the slow path. Thread ids
     * rather than identity hashes: the identity hash of a thread whose monitor is inflated
     * (Thread.join waits on it) leaves the JIT's fast path for a call into the VM.
     */
    static final int FAST_SLOTS = 4096;
    static final ThreadTrace[] FAST = new ThreadTrace[FAST_SLOTS];

    static {
        java.util.Arrays.fill(FAST, ThreadTrace.EMPTY);
    }

    /**
     * The calling thread's trace, registering the thread on its first event; null when it must
     * not record. The fast path fits HotSpot's MaxInlineSize (35 bytes of bytecode), so that it
     * inlines into every probe.
     */
    static ThreadTrace current() {
        Thread me = Thread.currentThread();
        ThreadTrace t = FAST[(int) ThreadObjects.id(me) & (FAST_SLOTS - 1)];
        if (t.thread == me) {
            return t;
        }
        return currentSlow(me);
    }

    @DontInline
    static ThreadTrace currentSlow(Thread thread) {
        Table t = table;
        Thread[] keys = t.keys;
        int mask = keys.length - 1;
        int i = System.identityHashCode(thread) & mask;
        for (;;) {
            Thread k = keys[i];
            if (k == thread) {
                return t.values[i];
            }
            if (k == null) {
                return register(thread);
            }
            i = (i + 1) & mask;
        }
    }

    /**
     * Marks one of the tracer's own threads so that it never records. Its entry also takes the
     * thread's fast slot, if free: the writer runs JDK code through some hundred million probes
     * on a run with a cold class cache (it describes the classes), each of which would otherwise
     * look the thread up in the table. A short-lived thread gives the slot back ({@link #leaveFast}).
     */
    public static void ignore(Thread thread) {
        synchronized (LOCK) {
            ThreadTrace trace = ThreadTrace.ignored(thread);
            put(thread, trace);
            claimFast(thread, trace);
        }
    }

    /** An ignored thread about to end gives its fast slot back to the program's threads. */
    public static void leaveFast(Thread thread) {
        synchronized (LOCK) {
            int slot = fastSlot(thread);
            if (FAST[slot].thread == thread) {
                FAST[slot] = ThreadTrace.EMPTY;
            }
        }
    }

    private static int fastSlot(Thread thread) {
        return (int) ThreadObjects.id(thread) & (FAST_SLOTS - 1);
    }

    /** Gives {@code thread} its fast slot, if no other thread holds it (under {@link #LOCK}). */
    private static void claimFast(Thread thread, ThreadTrace trace) {
        int slot = fastSlot(thread);
        if (slot != 0 && FAST[slot] == ThreadTrace.EMPTY) {
            FAST[slot] = trace;
        }
    }

    /**
     * Set once a virtual thread ran instrumented code untraced: one beyond
     * {@link Config#virtualThreadsMax}. What it runs is left out, and trace.json says so
     * ({@code limits.virtual_threads_untraced}). Such threads are not in the table: an entry per
     * thread would keep every one of them, and their Thread objects, until the run ends.
     */
    private static volatile boolean virtualThreadsUntraced;
    /** Virtual threads registered so far (under {@link #LOCK}). */
    private static int virtualThreadsTraced;

    public static boolean virtualThreadsUntraced() {
        return virtualThreadsUntraced;
    }

    public static int virtualThreadsTraced() {
        synchronized (LOCK) {
            return virtualThreadsTraced;
        }
    }

    private static ThreadTrace register(Thread thread) {
        boolean virtual = ThreadObjects.isVirtual(thread);
        // A virtual thread's state is not in a holder (it never gets one), and the JVM never
        // attaches one half-built, so only platform threads wait for theirs.
        if (!Tracer.active || (!virtual && !ThreadObjects.canBlock(thread))) {
            // Not yet (a thread the JVM attaches, inside its own Thread constructor): its events
            // are dropped until the object is whole, and the next one registers it.
            return null;
        }
        if (virtual && virtualThreadsUntraced) {
            // Set only once the limit is reached; read without the lock, as every method an
            // untraced virtual thread enters comes here.
            return null;
        }
        ThreadTrace trace;
        synchronized (LOCK) {
            if (virtual) {
                if (virtualThreadsTraced >= Config.virtualThreadsMax) {
                    virtualThreadsUntraced = true;
                    return null;
                }
                virtualThreadsTraced++;
            }
            // A placeholder first: creating the ThreadTrace allocates and calls instrumented JDK
            // code, which comes back here and must find a guarded entry instead of recursing.
            put(thread, ThreadTrace.REGISTERING);
            trace = new ThreadTrace(thread, nextIndex++);
            put(thread, trace);
            claimFast(thread, trace);
        }
        trace.started();
        return trace;
    }

    private static void put(Thread thread, ThreadTrace value) {
        Table t = table;
        if ((t.size + 1) * 2 > t.keys.length) {
            t = rebuild(t.keys.length * 2);
        }
        Thread[] keys = t.keys;
        int mask = keys.length - 1;
        int i = System.identityHashCode(thread) & mask;
        while (keys[i] != null && keys[i] != thread) {
            i = (i + 1) & mask;
        }
        if (keys[i] == null) {
            t.size++;
        }
        // Value before key: a reader that finds the key must find its value.
        t.values[i] = value;
        keys[i] = thread;
    }

    /** Copies the live entries into a fresh table of the given capacity and publishes it. */
    private static Table rebuild(int capacity) {
        Table old = table;
        Table fresh = new Table(capacity);
        int mask = capacity - 1;
        for (int j = 0; j < old.keys.length; j++) {
            Thread k = old.keys[j];
            if (k != null && old.values[j] != ThreadTrace.EMPTY) {
                int i = System.identityHashCode(k) & mask;
                while (fresh.keys[i] != null) {
                    i = (i + 1) & mask;
                }
                fresh.values[i] = old.values[j];
                fresh.keys[i] = k;
                fresh.size++;
            }
        }
        table = fresh;
        return fresh;
    }

    /** Every registered thread's trace (not the placeholders). Called by the tracer's own threads. */
    public static List<ThreadTrace> all() {
        List<ThreadTrace> result = new ArrayList<>();
        synchronized (LOCK) {
            Table t = table;
            for (int j = 0; j < t.keys.length; j++) {
                ThreadTrace v = t.values[j];
                if (t.keys[j] != null && v != ThreadTrace.EMPTY && v.thread != null && !v.ignored) {
                    result.add(v);
                }
            }
        }
        return result;
    }

    /**
     * Drops dead threads' entries (their traces were already finished by the caller) in one pass
     * over the table: a program that starts many short virtual threads ends hundreds of them
     * between two of the writer's turns.
     */
    public static void removeDead(List<ThreadTrace> dead) {
        if (dead.isEmpty()) {
            return;
        }
        java.util.Set<ThreadTrace> gone = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        gone.addAll(dead);
        synchronized (LOCK) {
            Table t = table;
            for (int j = 0; j < t.keys.length; j++) {
                ThreadTrace d = t.values[j];
                if (t.keys[j] != null && gone.contains(d)) {
                    int slot = fastSlot(d.thread);
                    if (FAST[slot] == d) {
                        FAST[slot] = ThreadTrace.EMPTY;
                    }
                    // Removal from an open-addressed table: drop the value, then rebuild.
                    t.values[j] = ThreadTrace.EMPTY;
                }
            }
            rebuild(t.keys.length);
        }
    }
}
