package jbgui.output;


/**
 * The writer's queue, filled by recording threads, which are the program's own threads.
 *
 * Nothing the tracer runs on a program's thread may call {@code LockSupport.park}: a thread has
 * one park permit, and a park inside the tracer (a contended {@code ReentrantLock}, as in
 * {@code LinkedBlockingQueue.add}) returns at once when the permit is already there, using it
 * up. A program that checked its condition and is about to park (FutureTask.get, AQS, every
 * java.util.concurrent waiter) then sleeps through the wake-up it was given: a traced program
 * hung about once in 175 runs of tests/programs/multithread, in FutureTask.get with its task
 * done. So producers add to a queue guarded by a monitor ({@link Fifo}) and wake the writer through a monitor
 * ({@code Object.wait}/{@code notifyAll} block on a thread's monitor event, not on the permit),
 * and only when the writer said it is about to sleep.
 */
final class HandOff {
    private final Fifo<Object> items = new Fifo<>(Integer.MAX_VALUE);
    private final Object bell = new Object();
    private volatile boolean sleeping;

    /** Queues {@code item}; never parks (called by the program's threads). */
    void add(Object item) {
        items.offer(item);
        if (sleeping) {
            synchronized (bell) {
                bell.notifyAll();
            }
        }
    }

    /**
     * Queues {@code item} without waking the writer, which finds it within its poll's timeout:
     * for what no one waits on (a class's part of static.xml, a line for agent.log, a clock
     * sample). A start-up that loads thousands of classes otherwise woke the writer for each
     * (a monitor notify, two context switches), on the two cores it shares with the program.
     */
    void addQuietly(Object item) {
        items.offer(item);
    }

    /** The next item, or null (the writer's). */
    Object poll() {
        return items.poll();
    }

    /** The next item, waiting at most {@code millis} for one; null when none came (the writer's). */
    Object poll(long millis) throws InterruptedException {
        Object item = items.poll();
        if (item != null) {
            return item;
        }
        synchronized (bell) {
            // Said before looking again: an add after this look sees it and rings (both volatile).
            sleeping = true;
            try {
                item = items.poll();
                if (item == null) {
                    bell.wait(millis);
                }
            } finally {
                sleeping = false;
            }
        }
        return item != null ? item : items.poll();
    }
}
