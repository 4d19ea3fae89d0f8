import java.util.concurrent.locks.LockSupport;

/**
 * Calls that block for known times, each followed by a short computation: the recorder's clock
 * stamps around blocking calls must give each its real duration (tests/recorder/test_blocking_times.py).
 *
 *   nap(200)      Thread.sleep(200)
 *   waitOn(120)   Object.wait(120) on a monitor nobody notifies
 *   park(80)      LockSupport.parkNanos(80 ms)
 *   spin(n)       pure computation between them
 */
public class Main {
    static final Object LOCK = new Object();

    static void nap(long ms) throws InterruptedException {
        Thread.sleep(ms);
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
            LockSupport.parkNanos(left);
        }
    }

    static long spin(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += (i * 31L) ^ (s >>> 3);
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        long s = spin(1000);
        nap(200);
        s += spin(1000);
        waitOn(120);
        s += spin(1000);
        park(80);
        s += spin(1000);
        System.out.println("done " + (s != 42));
    }
}
