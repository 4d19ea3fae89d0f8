/**
 * Runs until it is killed: a first burst of work (enough events to fill the recorder's buffers),
 * then "ready" on stdout, then a steady trickle of work. The signal tests send SIGTERM or SIGKILL
 * once "ready" is printed.
 *
 * Counts the recorder tests rely on: tick() has run at least 200,000 times when "ready" is
 * printed.
 */
public class Main {
    static long counter;

    static void tick(int i) {
        counter += i % 3;
    }

    public static void main(String[] args) throws InterruptedException {
        for (int i = 0; i < 200_000; i++) {
            tick(i);
        }
        System.out.println("ready " + counter);
        System.out.flush();
        while (true) {
            for (int i = 0; i < 1000; i++) {
                tick(i);
            }
            Thread.sleep(1);
        }
    }
}
