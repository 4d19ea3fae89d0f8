import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/** A thread that burns a given amount of its own CPU time through calls (tests/recorder/test_thread_cpu.py). */
public class Main {
    static int depth(int n) {
        return n == 0 ? 1 : 1 + depth(n - 1);
    }

    public static void main(String[] args) throws Exception {
        long burnNanos = Long.parseLong(args[0]) * 1_000_000L;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long[] sum = new long[1];
        Thread spinner = new Thread(() -> {
            long start = mx.getCurrentThreadCpuTime();
            while (mx.getCurrentThreadCpuTime() - start < burnNanos) {
                for (int i = 0; i < 1000; i++) {
                    sum[0] += depth(i & 15);
                }
            }
        }, "spinner");
        spinner.start();
        spinner.join();
        System.out.println("spun " + (sum[0] > 0));
    }
}
