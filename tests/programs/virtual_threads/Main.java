/**
 * A virtual thread beside main (JDK 21+), made through reflection so that the program compiles on
 * every JDK the tests run: the trace's threads.jsonl must say which thread is virtual.
 */
public class Main {
    static int work(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            s += i % 7;
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        int[] result = new int[1];
        Runnable task = () -> result[0] = work(1000);
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Class<?> builderType = Class.forName("java.lang.Thread$Builder");
        builder = builderType.getMethod("name", String.class).invoke(builder, "vt-worker");
        Thread t = (Thread) builderType.getMethod("unstarted", Runnable.class).invoke(builder, task);
        t.start();
        t.join();
        System.out.println("virtual thread computed " + result[0]);
    }
}
