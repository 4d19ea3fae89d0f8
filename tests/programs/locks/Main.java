/**
 * Hot synchronized blocks (tests/agent/test_probe_inlining.py): HotSpot's compilers must compile
 * them traced as they do untraced. The clock stamp after a monitorenter once sat outside the
 * block's own handler, and C1 and C2 then refused every such method, which stayed interpreted.
 * addLoop's block begins with a loop, so a jump goes to the block's first instruction: the stamp
 * must run once per monitorenter, not once per turn of the loop.
 */
public class Main {
    private final Object lock = new Object();
    private int count;

    int add(int i) {
        synchronized (lock) {
            count += i & 7;
            return count;
        }
    }

    int addLoop(int n) {
        synchronized (lock) {
            do {
                count++;
            } while (--n > 0);
            return count;
        }
    }

    public static void main(String[] args) {
        Main m = new Main();
        long sum = 0;
        for (int i = 0; i < 1_000_000; i++) {
            sum += m.add(i);
            sum += m.addLoop(3);
        }
        System.out.println("sum " + sum + " count " + m.count);
    }
}
