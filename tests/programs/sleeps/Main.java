/**
 * A blocking call between two stretches of work: Thread.sleep(200) in the main thread. The
 * recorder stamps the clock around it, so its duration is exact; recorded with blocking=off it
 * can only be interpolated between clock samples taken at buffer flushes, and the explorer must
 * mark it (and the calls around it) as interpolated. Also a worker thread of the
 * same name as another one ("twin"), for the thread tables.
 */
public class Main {
    static long work(int n) {
        long sum = 0;
        for (int i = 0; i < n; i++) {
            sum += step(i);
        }
        return sum;
    }

    static long step(int i) {
        return (i * 31L) % 7;
    }

    static void pause() throws InterruptedException {
        Thread.sleep(200);
    }

    public static void main(String[] args) throws Exception {
        long before = work(50_000);
        pause();
        long after = work(50_000);
        Thread[] twins = {new Thread(() -> work(1000), "twin"), new Thread(() -> work(2000), "twin")};
        for (Thread t : twins) {
            t.start();
            t.join();
        }
        System.out.println(before + after);
    }
}
