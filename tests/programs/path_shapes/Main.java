/**
 * Methods of the shapes benchmarks/path_share.py tells apart (docs/recorder-cost.md, "Path ends,
 * and the kernel's floor, measured").
 */
public class Main {
    /** Three paths, no loop, no call: its blocks after the first are all spared. */
    static int clamp(int x) {
        if (x < 0) {
            return 0;
        }
        if (x > 9) {
            return 9;
        }
        return x;
    }

    /** A static leaf of one block: no block after its first. */
    static int twice(int x) {
        return x + x;
    }

    /** No loop, a call on one of its two paths: counted with calls, one flush word per call made. */
    static int pick(int x) {
        if (x > 3) {
            return twice(x);
        }
        return x;
    }

    /** Allocates an object (a class load may follow): does not qualify. */
    static Object make(int x) {
        if (x > 3) {
            return new StringBuilder();
        }
        return null;
    }

    /** A loop: does not qualify. */
    static int count(int x) {
        int n = 0;
        while (x > 0) {
            x >>= 1;
            n++;
        }
        return n;
    }

    public static void main(String[] args) {
        long total = 0;
        int made = 0;
        for (int r = 0; r < 10; r++) {
            for (int i = 0; i < 1000; i++) {
                int x = i % 20 - 5;
                total += clamp(x) + pick(x) + count(i);
                if (make(x) != null) {
                    made++;
                }
            }
        }
        System.out.println("total " + total + " made " + made);
    }
}
