/**
 * A big, bushy call tree for the aggregated views' responsiveness test: about two million calls
 * in a few thousand distinct calling contexts (work → left/right → work … → leaf), so that
 * building the calling-context tree takes a noticeable time.
 */
public class Main {
    static long sink;

    static int work(int depth, int seed) {
        if (depth == 0) {
            return leaf(seed);
        }
        int s = 0;
        for (int i = 0; i < 4; i++) {
            int next = seed * 31 + i;
            s += ((next & 1) == 0) ? left(depth - 1, next) : right(depth - 1, next);
        }
        return s;
    }

    static int left(int depth, int seed) {
        return work(depth, seed) + 1;
    }

    static int right(int depth, int seed) {
        return work(depth, seed) + 2;
    }

    static int leaf(int x) {
        return x * 3;
    }

    public static void main(String[] args) {
        for (int round = 0; round < 6; round++) {
            sink += work(8, round);
        }
        System.out.println("sink " + sink);
    }
}
