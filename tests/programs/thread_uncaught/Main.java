/**
 * An uncaught exception ends a thread other than main: the default handler prints it on stderr,
 * main carries on and the program exits with status 0.
 *
 * Counts the recorder tests rely on: on the thread "worker-fail", run(), step() and failDeep()
 * each start once and leave by an exception.
 */
public class Main {
    static void failDeep(int n) {
        throw new IllegalStateException("worker failed at " + n);
    }

    static void step(int n) {
        failDeep(n + 1);
    }

    static final class Failing implements Runnable {
        @Override
        public void run() {
            System.out.println("worker starting");
            step(41);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread worker = new Thread(new Failing(), "worker-fail");
        worker.start();
        worker.join();
        System.out.println("worker alive after join: " + worker.isAlive());
        System.out.println("main carries on");
    }
}
