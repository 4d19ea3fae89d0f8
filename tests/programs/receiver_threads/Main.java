/**
 * Three threads call the same inherited methods, Base.v (which calls) and Base.w (a leaf), each on
 * receivers of its own subclass, at the same time: thread "ta" on an A, "tb" on a B, "tc" on a C.
 * The entry probes' table of each method's usual receiver classes (two) is shared by the threads,
 * so one thread's class is in neither slot; every start must still carry its own receiver's class
 * (tests/recorder/test_receiver_threads.py). Prints the sum of the counters.
 */
public class Main {
    static class Base {
        int n;

        int w() {
            return ++n;
        }

        int v() {
            return w() + 1;
        }
    }

    static final class A extends Base {
    }

    static final class B extends Base {
    }

    static final class C extends Base {
    }

    static final int CALLS = 100_000;

    static Thread caller(String name, Base receiver, long[] sums, int slot) {
        return new Thread(() -> {
            long sum = 0;
            for (int i = 0; i < CALLS; i++) {
                sum += receiver.v();
            }
            sums[slot] = sum;
        }, name);
    }

    public static void main(String[] args) throws InterruptedException {
        long[] sums = new long[3];
        Thread a = caller("ta", new A(), sums, 0);
        Thread b = caller("tb", new B(), sums, 1);
        Thread c = caller("tc", new C(), sums, 2);
        a.start();
        b.start();
        c.start();
        a.join();
        b.join();
        c.join();
        System.out.println(sums[0] + sums[1] + sums[2]);
    }
}
