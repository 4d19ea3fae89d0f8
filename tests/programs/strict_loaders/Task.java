/** Loaded by the strict loaders from its bytes: it names only java.lang classes. */
public class Task implements Runnable {
    private int runs;

    @Override
    public void run() {
        runs++;
        StringBuilder s = new StringBuilder("task run ").append(runs);
        System.out.println(s);
    }
}
