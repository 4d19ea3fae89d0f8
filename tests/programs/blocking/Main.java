import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

/**
 * Calls that block for known times, each followed by a short computation: the recorder's clock
 * stamps around blocking calls must give each its real duration (tests/recorder/test_blocking_times.py).
 *
 *   nap(200)      System.nanoTime(), then Thread.sleep(200)
 *   waitOn(120)   Object.wait(120) on a monitor nobody notifies
 *   park(80)      LockSupport.parkNanos(blocker, 80 ms): setBlocker, Unsafe.park, setBlocker, so
 *                 a call starts at the very event at which the native park is recorded
 *   spin(n)       pure computation between them
 *   lockedOut()   synchronized (HELD) while a thread "holder" holds HELD for 300 ms: a contended
 *                 monitorenter, which the recorder stamps when it waited
 *
 * The program measures each of these calls itself (System.nanoTime around it) and prints the
 * nanoseconds on stderr, one "measured NAME NANOS" line each, in call order: the truth the
 * trace's times are held against (stdout stays the same whatever the timing); "released NANOS"
 * is System.nanoTime() when the holder last ran with HELD held.
 */
public class Main {
    static final Object LOCK = new Object();

    /** On JDK 17 Thread.sleep is native: the nanoTime before it is a native at the same event. */
    static long nap(long ms) throws InterruptedException {
        long t = System.nanoTime();
        Thread.sleep(ms);
        return t;
    }

    static void waitOn(long ms) throws InterruptedException {
        long until = System.nanoTime() + ms * 1_000_000L;
        synchronized (LOCK) {
            // Spurious wake-ups are allowed: wait again for the rest.
            for (long left = ms; left > 0; left = (until - System.nanoTime()) / 1_000_000L) {
                LOCK.wait(left);
            }
        }
    }

    static void park(long ms) {
        long until = System.nanoTime() + ms * 1_000_000L;
        for (long left = ms * 1_000_000L; left > 0; left = until - System.nanoTime()) {
            LockSupport.parkNanos(LOCK, left);
        }
    }

    static final Object HELD = new Object();
    static volatile long released;

    /** Waits for HELD, which the holder keeps for 300 ms after it let us go. */
    static long lockedOut() throws InterruptedException {
        CountDownLatch holding = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            synchronized (HELD) {
                holding.countDown();
                try {
                    Thread.sleep(300);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                released = System.nanoTime();
            }
        }, "holder");
        holder.start();
        holding.await();
        long t = System.nanoTime();
        long waited;
        synchronized (HELD) {
            waited = System.nanoTime() - t;
        }
        holder.join();
        return waited;
    }

    static long spin(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += (i * 31L) ^ (s >>> 3);
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        String[] names = {"spin", "nap", "spin", "waitOn", "spin", "park", "spin", "lockedOut", "monitorenter"};
        long[] took = new long[names.length];
        long t = System.nanoTime();
        long s = spin(1000);
        took[0] = System.nanoTime() - t;
        t = System.nanoTime();
        nap(200);
        took[1] = System.nanoTime() - t;
        t = System.nanoTime();
        s += spin(1000);
        took[2] = System.nanoTime() - t;
        t = System.nanoTime();
        waitOn(120);
        took[3] = System.nanoTime() - t;
        t = System.nanoTime();
        s += spin(1000);
        took[4] = System.nanoTime() - t;
        t = System.nanoTime();
        park(80);
        took[5] = System.nanoTime() - t;
        t = System.nanoTime();
        s += spin(1000);
        took[6] = System.nanoTime() - t;
        t = System.nanoTime();
        took[8] = lockedOut();
        took[7] = System.nanoTime() - t;
        System.out.println("done " + (s != 42));
        for (int i = 0; i < names.length; i++) {
            System.err.println("measured " + names[i] + " " + took[i]);
        }
        System.err.println("released " + released);
    }
}
