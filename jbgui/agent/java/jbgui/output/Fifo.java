package jbgui.output;

/**
 * A first-in first-out queue of the agent's own, for what the program's threads hand to the
 * writer ({@link HandOff}) and the buffers it hands back (TraceWriter's pool).
 *
 * <p>Why not {@code java.util.concurrent}: the JDK's classes are instrumented, so the tracer's
 * every use of a JDK queue runs probes (recording nothing, on a guarded thread), and HotSpot's C2
 * compiles those hot JDK methods with their probes inlined. In jEdit's start-up, traced, C2 spent
 * 1.7 s compiling {@code ConcurrentLinkedQueue}'s methods and the hand-off around them (JFR's
 * jdk.Compilation events), more than a tenth of its work. The agent's own classes are not
 * instrumented. A monitor, not a {@code ReentrantLock}: a contended monitor blocks on the
 * thread's monitor event, never on its park permit (see HandOff).
 */
final class Fifo<T> {
    private Object[] items = new Object[64];
    /** Index of the oldest item. */
    private int head;
    private int size;
    private final int bound;

    /** A queue of at most {@code bound} items ({@link #offer} refuses more). */
    Fifo(int bound) {
        this.bound = bound;
    }

    /** Adds {@code item} unless the queue holds {@code bound} items already; whether it did. */
    synchronized boolean offer(T item) {
        if (size >= bound) {
            return false;
        }
        if (size == items.length) {
            Object[] bigger = new Object[items.length * 2];
            int tail = items.length - head;
            System.arraycopy(items, head, bigger, 0, tail);
            System.arraycopy(items, 0, bigger, tail, head);
            items = bigger;
            head = 0;
        }
        items[(head + size) & (items.length - 1)] = item;
        size++;
        return true;
    }

    /** The oldest item, removed; null when there is none. */
    @SuppressWarnings("unchecked")
    synchronized T poll() {
        if (size == 0) {
            return null;
        }
        Object item = items[head];
        items[head] = null;
        head = (head + 1) & (items.length - 1);
        size--;
        return (T) item;
    }
}
