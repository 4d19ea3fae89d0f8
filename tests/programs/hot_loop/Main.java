/**
 * A hot loop through a small instance method: millions of events, so that the recorder's buffer
 * fills hundreds of times and the JIT compiles the probes (tests/agent/test_probe_inlining.py).
 * The sum is fixed: 3,000,000 calls of step(i) starting from x = 0.
 */
public class Main {
    int x;

    int step(int i) {
        if ((i & 1) == 0) {
            x += i;
        } else {
            x -= 1;
        }
        return x;
    }

    public static void main(String[] args) {
        Main m = new Main();
        long sum = 0;
        for (int i = 0; i < 3_000_000; i++) {
            sum += m.step(i);
        }
        System.out.println("sum " + sum);
    }
}
