/**
 * Loops whose steps the recorder stores as loop records (agent option loops, jbgui.instr.LoopCycles),
 * left every way a loop can be left: by its condition, by break, by return from the middle of the
 * body, by an implicit exception (whose constructor the tracer records before the handler runs),
 * after more steps than one record holds, and on two threads at once. Recorded with loops=on and
 * loops=off, the trace must read back the same (tests/recorder/test_loop_records.py).
 */
public class Main {
    int[] data;
    int total;

    Main(int n) {
        data = new int[n];
        // A loop in a constructor, on its own class's fields.
        for (int i = 0; i < n; i++) {
            data[i] = i * 7 % 13;
        }
    }

    /** Condition at the top, a two-block cycle. */
    static int sum(int[] a) {
        int s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i];
        }
        return s;
    }

    /** A return from the middle of the body: the exit block sits inside the loop's span of code. */
    static int lastIndexOf(int[] a, int x) {
        for (int i = a.length - 1; i >= 0; i--) {
            if (a[i] == x) {
                return i;
            }
        }
        return -1;
    }

    /** A break to the code after the loop, and a do-while. */
    static int firstOver(int[] a, int limit) {
        int i = 0;
        while (true) {
            if (a[i] > limit) {
                break;
            }
            i++;
        }
        int j = 0;
        do {
            j += 3;
        } while (j < i);
        return i + j;
    }

    /** Fields of the method's own class in the loop. */
    int accumulate() {
        for (int i = 0; i < data.length; i++) {
            total += data[i];
        }
        return total;
    }

    /** Left by an ArrayIndexOutOfBoundsException in the last block of a three-block cycle. */
    static int overrun(int[] a, int extra) {
        int s = 0;
        for (int i = 0; i < a.length + extra; i++) {
            if (s < 0) {
                return -1;
            }
            s += a[i];
        }
        return s;
    }

    /** Left by an ArithmeticException (a division by zero) after many steps. */
    static int divide(int[] a) {
        int s = 0;
        for (int i = a.length - 1; ; i--) {
            s += 100 / a[i];
        }
    }

    /** More steps than one record holds (EventLayout.LOOP_STEPS_MAX), then an exception. */
    static long longLoop(int n, boolean fail) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += i;
        }
        if (fail) {
            int[] counts = new int[n];
            for (int i = 0; i <= n; i++) {
                counts[i] += 1;
            }
        }
        return s;
    }

    /** A static leaf: one block, no call, nothing that throws. */
    static int mix(int h, int v) {
        return (h ^ v) * 0x9E3779B1;
    }

    /** A static leaf called on the cycle: the record stands for its calls too. */
    static int hash(int n) {
        int h = 1;
        for (int i = 0; i < n; i++) {
            h = mix(h, i);
        }
        return h;
    }

    /** A leaf called in the block before the header in code order, then an exception after the call. */
    static int hashInto(int[] a, int n) {
        int h = 7;
        int i = 0;
        do {
            h = mix(h, i);
            a[i] = h;
            i++;
        } while (i < n);
        return h;
    }

    /** Nested loops: the inner one qualifies, the outer one does not. */
    static int table(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                s += i * j;
            }
            s ^= i;
        }
        return s;
    }

    /**
     * A sieve: the cycle is the loop's usual path (a number already crossed out); the rare path
     * runs an inner loop, which has records of its own, and rejoins the cycle at its last block.
     */
    static int sieveCount(int n) {
        boolean[] crossed = new boolean[n + 1];
        int count = 0;
        for (int i = 2; i <= n; i++) {
            if (!crossed[i]) {
                count++;
                for (int j = i * i; j <= n && j > 0; j += i) {
                    crossed[j] = true;
                }
            }
        }
        return count;
    }

    /**
     * A rare call off the cycle, rejoining two blocks before the header, with a break between them
     * (the loop can be left in a step that began off the cycle), and a program handler off the cycle.
     */
    static int rareCalls(int[] a, StringBuilder out) {
        int s = 0;
        int i = 0;
        while (i < a.length) {
            int v = a[i];
            if (v % 10 == 0) {
                out.append(v);
                if (v == 30) {
                    try {
                        Integer.parseInt("x");
                    } catch (NumberFormatException e) {
                        s++;
                    }
                }
            }
            s += v;
            if (s > 2_500) {
                break;
            }
            i++;
        }
        return s;
    }

    /** Left by an ArithmeticException in a block that a step off the cycle rejoined (no record pending). */
    static int divideAfterCall(int[] a, StringBuilder out) {
        int s = 0;
        for (int i = a.length - 1; ; i--) {
            if (a[i] == 0) {
                out.append('z');
            }
            s += 100 / a[i];
        }
    }

    /** A rare branch off the cycle that rejoins it before the leaf's call: a step may reach the call with no record pending. */
    static int joinThenLeaf(int[] a, StringBuilder out) {
        int h = 0;
        for (int i = 0; i < a.length; i++) {
            int v = a[i];
            if (v % 10 == 0) {
                out.append('j');
            }
            h = mix(h, v);
        }
        return h;
    }

    /** A pure leaf of several blocks (jbgui.instr.PureLeaves) that can throw: written in place on a cycle. */
    static boolean isOdd(int[] a, int i) {
        return (a[i] & 1) != 0;
    }

    /** A pure leaf with several paths, none of which throws. */
    static int bucket(int v) {
        if (v < 10) {
            return 1;
        }
        if (v < 50) {
            return (v & 7) == 0 ? 2 : 3;
        }
        return 4;
    }

    /** Like the compute kernel's sieve: the leaf's usual path on the cycle, a rare path off it with a call. */
    static int oddOnes(int[] a, StringBuilder out) {
        int n = 0;
        for (int i = 0; i < a.length; i++) {
            if (isOdd(a, i)) {
                out.append(i % 10);
                n++;
            }
        }
        return n;
    }

    /** The leaf's path changes from step to step: each change ends a record and begins the next. */
    static int buckets(int n) {
        int h = 0;
        for (int i = 0; i < n; i++) {
            int b = bucket(i & 63);
            h = h * 3 + b;
        }
        return h;
    }

    /** Left by an exception thrown inside the leaf's body in place (at the first step when {@code from} is out of range). */
    static int oddOnesFrom(int[] a, int from, StringBuilder out) {
        int n = 0;
        for (int i = from; ; i++) {
            if (isOdd(a, i)) {
                out.append('o');
                n++;
            }
        }
    }

    static int[] tens(int n) {
        int[] b = new int[n];
        for (int i = 0; i < n; i++) {
            b[i] = i % 40;
        }
        return b;
    }

    static String run(int seed) {
        int[] a = new int[200 + seed];
        for (int i = 0; i < a.length; i++) {
            a[i] = (i * 31 + seed) % 97;
        }
        StringBuilder out = new StringBuilder();
        out.append(sum(a)).append(' ').append(lastIndexOf(a, 5)).append(' ').append(lastIndexOf(a, -1));
        out.append(' ').append(firstOver(a, 90)).append(' ').append(new Main(50 + seed).accumulate());
        try {
            overrun(a, 3);
        } catch (ArrayIndexOutOfBoundsException e) {
            out.append(" overrun");
        }
        a[seed % 7] = 0;
        try {
            divide(a);
        } catch (ArithmeticException e) {
            out.append(" divide");
        }
        out.append(' ').append(table(30 + seed));
        out.append(' ').append(hash(1000 + seed)).append(' ').append(hash(0)).append(' ').append(hash(1));
        try {
            hashInto(a, a.length + 1);
        } catch (ArrayIndexOutOfBoundsException e) {
            out.append(" hashInto");
        }
        out.append(' ').append(sieveCount(2000 + seed)).append(' ').append(rareCalls(tens(150 + seed), new StringBuilder()))
                .append(' ').append(rareCalls(tens(20), new StringBuilder()));
        out.append(' ').append(joinThenLeaf(tens(60 + seed), new StringBuilder()));
        StringBuilder odd = new StringBuilder();
        out.append(' ').append(oddOnes(a, odd)).append(' ').append(odd.length()).append(' ').append(buckets(500 + seed));
        for (int from : new int[] {0, a.length - 3, a.length + 2, -1}) {
            try {
                oddOnesFrom(a, from, odd);
            } catch (ArrayIndexOutOfBoundsException e) {
                out.append(" oddOnesFrom ").append(e.getMessage());
            }
        }
        StringBuilder zs = new StringBuilder();
        a[seed % 5] = 0;
        a[seed % 5 + 2] = 0;
        try {
            divideAfterCall(a, zs);
        } catch (ArithmeticException e) {
            out.append(" divideAfterCall ").append(zs);
        }
        // Loops of one, three and five steps: up to three are stored as block words, not as a record.
        out.append(' ').append(sum(new int[0]) + sum(new int[1]) + sum(new int[2]));
        return out.toString();
    }

    public static void main(String[] args) throws Exception {
        // Resolves the handler's class (NumberFormatException) on this thread before the twin can:
        // the first resolution runs the loader's code, on whichever thread comes first.
        rareCalls(tens(31), new StringBuilder());
        String[] other = new String[1];
        Thread twin = new Thread(() -> other[0] = run(3), "twin");
        twin.start();
        String mine = run(0);
        twin.join();
        System.out.println(mine);
        System.out.println(other[0]);
        System.out.println(longLoop(1_500_000, false));
        // More steps with a leaf's call than one record holds (a sixteenth of LOOP_STEPS_MAX).
        System.out.println(hash(700_000));
        try {
            longLoop(1_200_000, true);
        } catch (ArrayIndexOutOfBoundsException e) {
            System.out.println("long overrun");
        }
    }
}
