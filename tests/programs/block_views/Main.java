// Block-level views with answers known by construction (tests/model/test_blockviews.py):
// - loop(n): one for loop; called with trip counts 0, 1, 2, 3, 3, 10;
// - classify(x): three paths (negative / zero / positive), called 5, 3 and 2 times; the
//   positive path only from rare(), the others from common();
// - check(x): the branch x > 1000 is never taken;
// - level1 -> level2 -> level3: level3 throws an IllegalStateException, level2 is unwound,
//   level1 catches it (twice);
// - ignore(): calls level3 and catches the exception in an empty handler (once); walk: below.
public class Main {
    static int loop(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            s += i;
        }
        return s;
    }

    static int classify(int x) {
        if (x < 0) {
            return -1;
        }
        if (x == 0) {
            return 0;
        }
        return 1;
    }

    static int check(int x) {
        if (x > 1000) {
            x = x / 2 + 7;
        }
        return x + 1;
    }

    static int level3(int x) {
        if (x >= 0) {
            throw new IllegalStateException("level3");
        }
        return x;
    }

    static int level2(int x) {
        return level3(x) + 1;
    }

    static int level1(int x) {
        try {
            return level2(x);
        } catch (IllegalStateException e) {
            return -100;
        }
    }

    static void ignore() {
        try {
            level3(5);
        } catch (IllegalStateException e) {
        }
    }

    // A loop of width iterations that recurses on its first one while depth > 0: walk(2, 3) runs
    // walk(1, 2), which runs walk(0, 1): three calls whose loops run 3, 2 and 1 iterations, the
    // inner calls' loops ending while the outer ones run; two paths (recursing: 2 calls; not: 1).
    static int walk(int depth, int width) {
        int s = 0;
        for (int i = 0; i < width; i++) {
            if (i == 0 && depth > 0) {
                s += walk(depth - 1, width - 1);
            }
            s += i;
        }
        return s;
    }

    static int common() {
        int s = 0;
        for (int i = 0; i < 5; i++) {
            s += classify(-1 - i);
        }
        for (int i = 0; i < 3; i++) {
            s += classify(0);
        }
        return s;
    }

    static int rare() {
        return classify(7) + classify(8);
    }

    public static void main(String[] args) {
        int s = 0;
        int[] trips = {0, 1, 2, 3, 3, 10};
        for (int n : trips) {
            s += loop(n);
        }
        s += common() + rare();
        for (int i = 0; i < 4; i++) {
            s += check(i);
        }
        s += level1(1) + level1(2);
        ignore();
        s += walk(2, 3);
        System.out.println("sum " + s);
    }
}
