package jbgui.output;

import java.util.concurrent.locks.LockSupport;

import jbgui.runtime.EventLayout;
import jbgui.runtime.ThreadRegistry;
import jbgui.runtime.ThreadTrace;
import jbgui.runtime.Tracer;

/**
 * Samples (event position, nanoTime) of every recording thread about once a millisecond, so that
 * threads can be laid side by side on one time axis. Reading System.nanoTime at every event
 * would cost more than recording the event; sampling from outside costs the program nothing.
 * A thread whose position does not move (blocked, sleeping) produces samples only at both ends
 * of the pause, which is all interpolation needs.
 */
final class ClockSampler implements Runnable {
    private final long periodNanos;
    private final boolean shared;
    private volatile boolean running = true;
    Thread thread;

    /**
     * Per stream index: last position, its time, and whether that sample was written. Keyed by
     * index, not by the ThreadTrace: hashing it would install an identity hash in the header of
     * an object the recording thread writes all the time.
     */
    private long[][] last = new long[64][];
    private final long[] batch = new long[4 * 256];
    private int count;

    ClockSampler(int periodMicros, boolean shared) {
        this.periodNanos = periodMicros * 1000L;
        this.shared = shared;
    }

    void stop() {
        running = false;
        if (thread != null) {
            LockSupport.unpark(thread);
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void run() {
        long lastFlush = System.nanoTime();
        while (running) {
            LockSupport.parkNanos(periodNanos);
            if (!Tracer.isActive()) {
                continue;
            }
            long now = System.nanoTime();
            if (shared) {
                sample(0, Tracer.sharedPosition(), now);
            } else {
                for (ThreadTrace t : ThreadRegistry.all()) {
                    sample(t.index, t.position(), now);
                }
            }
            if (count > 0 && (count * 4 + 8 > batch.length || now - lastFlush > 50_000_000L)) {
                flush();
                lastFlush = now;
            }
        }
        flush();
    }

    private void sample(int stream, long position, long now) {
        if (stream >= last.length) {
            last = java.util.Arrays.copyOf(last, Math.max(stream + 1, last.length * 2));
        }
        long[] prev = last[stream];
        if (prev == null) {
            last[stream] = new long[] {position, now, 1};
            add(stream, position, now);
            return;
        }
        if (position < prev[0]) {
            position = prev[0]; // a racy read of a thread mid-flush; positions never go back
        }
        if (position != prev[0]) {
            if (prev[2] == 0) {
                add(stream, prev[0], prev[1]); // the end of a pause
            }
            add(stream, position, now);
            prev[2] = 1;
        } else {
            prev[2] = 0;
        }
        prev[0] = position;
        prev[1] = now;
    }

    private void add(int stream, long position, long nanos) {
        if (count * 4 + 4 > batch.length) {
            flush();
        }
        int i = count * 4;
        batch[i] = stream;
        batch[i + 1] = position;
        batch[i + 2] = nanos;
        batch[i + 3] = 0;
        count++;
    }

    private void flush() {
        if (count > 0) {
            long[] copy = java.util.Arrays.copyOf(batch, count * 4);
            TraceWriter.clockSamples(copy, count);
            count = 0;
        }
    }
}
