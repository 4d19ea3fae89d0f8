/** Loops of the three shapes benchmarks/loop_share.py tells apart (docs/loop-events.md). */
public class Main {
    /** One path, no call: qualifies for a loop event. */
    static int sum(int[] a) {
        int s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i];
        }
        return s;
    }

    /** A static leaf of one block (start, its implied block and end: three words a call). */
    static int square(int x) {
        return x * x;
    }

    /** One path with a static leaf call: qualifies only with the leaf extension. */
    static int squares(int[] a) {
        int s = 0;
        for (int i = 0; i < a.length; i++) {
            s += square(a[i]);
        }
        return s;
    }

    /** Two paths through the body: does not qualify. */
    static int signs(int[] a) {
        int s = 0;
        for (int i = 0; i < a.length; i++) {
            if (a[i] > 500) {
                s += 1;
            } else {
                s -= 1;
            }
        }
        return s;
    }

    public static void main(String[] args) {
        int[] a = new int[1000];
        for (int i = 0; i < a.length; i++) {
            a[i] = i;
        }
        long total = 0;
        for (int r = 0; r < 10; r++) {
            total += sum(a) + squares(a) + signs(a);
        }
        System.out.println("total " + total);
    }
}
