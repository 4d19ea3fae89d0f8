/**
 * One frame with a quarter of a million callees: main calls step() 250,000 times. The call tree
 * must open main without building a row per callee (tests/ui/test_explorer.py).
 */
public class Main {
    static long total;

    static void step(int i) {
        total += i & 7;
    }

    public static void main(String[] args) {
        for (int i = 0; i < 250_000; i++) {
            step(i);
        }
        System.out.println("total " + total);
    }
}
