import java.util.ArrayList;
import java.util.List;

/**
 * Virtual threads beside main (JDK 21+), made through reflection so that the program compiles on
 * every JDK the tests run. Without arguments: one virtual thread, "vt-worker". With N: N virtual
 * threads "vt-0" .. "vt-N-1", each of which sleeps between two calls, so that its frames are
 * unmounted from one carrier and mounted again, perhaps on another. With "spin": four virtual
 * threads that never block (as many as the carriers run, and more) and one parked for good, left
 * running when main returns.
 */
public class Main {
    static int work(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            s += i % 7;
        }
        return s;
    }

    static int sleepy(int n) {
        int a = work(n);
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        return a + work(n + 1);
    }

    static volatile int sink;

    static int step(int i) {
        return (i * 31) ^ (i >>> 3);
    }

    static void spin() {
        int i = 0;
        for (;;) {
            i = step(i + 1);
            if ((i & 0xffff) == 0) {
                sink = i;
            }
        }
    }

    static Thread virtual(String name, Runnable task) throws Exception {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Class<?> builderType = Class.forName("java.lang.Thread$Builder");
        builder = builderType.getMethod("name", String.class).invoke(builder, name);
        return (Thread) builderType.getMethod("unstarted", Runnable.class).invoke(builder, task);
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            int[] result = new int[1];
            Thread t = virtual("vt-worker", () -> result[0] = work(1000));
            t.start();
            t.join();
            System.out.println("virtual thread computed " + result[0]);
            return;
        }
        if (args[0].equals("spin")) {
            for (int k = 0; k < 4; k++) {
                virtual("spin-" + k, Main::spin).start();
            }
            virtual("parked", java.util.concurrent.locks.LockSupport::park).start();
            Thread.sleep(300);
            System.out.println("main done");
            return;
        }
        int n = Integer.parseInt(args[0]);
        int[] results = new int[n];
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int k = i;
            threads.add(virtual("vt-" + i, () -> results[k] = sleepy(100 + k)));
        }
        for (Thread t : threads) {
            t.start();
        }
        long sum = 0;
        for (int i = 0; i < n; i++) {
            threads.get(i).join();
            sum += results[i];
        }
        System.out.println(n + " virtual threads computed " + sum);
    }
}
