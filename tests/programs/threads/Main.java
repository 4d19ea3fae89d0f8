/**
 * Several threads running at once, each with a deterministic sequence of application calls, for
 * the replay oracle (tests/oracle): "alpha" and "beta" compute with exceptions thrown and caught
 * inside, contending for one lock; "doomed" ends with an uncaught exception thrown three calls
 * deep (the default handler prints it on stderr); "handled" ends with an uncaught exception that
 * an application UncaughtExceptionHandler receives, on the dying thread itself. Main joins them
 * all and prints what they computed.
 */
public class Main {
    static final Object lock = new Object();
    static long shared;
    static final long[] results = new long[2];
    static volatile String handledBy = "nobody";

    static long step(int i) {
        if (i % 5 == 4) {
            throw new IllegalStateException("step " + i);
        }
        return i * 3L;
    }

    static long guarded(int i) {
        try {
            return step(i);
        } catch (IllegalStateException e) {
            return -1;
        }
    }

    static void addShared(long v) {
        synchronized (lock) {
            shared += v;
        }
    }

    static long compute(int rounds) {
        long sum = 0;
        for (int i = 0; i < rounds; i++) {
            long v = guarded(i);
            addShared(v);
            sum += v;
        }
        return sum;
    }

    static void failInner(int n) {
        throw new IllegalStateException("doomed at " + n);
    }

    static void failMiddle(int n) {
        failInner(n + 1);
    }

    static void failOuter(int n) {
        try {
            failMiddle(n + 1);
        } finally {
            addShared(1000);
        }
    }

    static final class Recorder implements Thread.UncaughtExceptionHandler {
        @Override
        public void uncaughtException(Thread t, Throwable e) {
            handledBy = describe(t, e);
        }

        static String describe(Thread t, Throwable e) {
            return t.getName() + " handled " + e.getMessage();
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread alpha = new Thread(() -> results[0] = compute(12), "alpha");
        Thread beta = new Thread(() -> results[1] = compute(7), "beta");
        Thread doomed = new Thread(() -> failOuter(1), "doomed");
        Thread handled = new Thread(() -> failMiddle(10), "handled");
        handled.setUncaughtExceptionHandler(new Recorder());
        Thread[] all = {alpha, beta, doomed, handled};
        for (Thread t : all) {
            t.start();
        }
        for (Thread t : all) {
            t.join();
        }
        System.out.println("alpha " + results[0] + ", beta " + results[1] + ", shared " + shared);
        System.out.println(handledBy);
        System.out.println("main " + compute(3));
    }
}
