/**
 * A thread whose name holds what export formats must escape: the collapsed-stack separator ';',
 * CSV's ',' and '"', a tab and a line break (tests/model/test_export.py).
 */
public class Main {
    static final String NAME = "odd;name, \"quoted\"\tand\nsecond line";

    static int work(int n) {
        int sum = 0;
        for (int i = 0; i < n; i++) {
            sum += i % 7;
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        int[] result = new int[1];
        Thread odd = new Thread(() -> result[0] = work(1000), NAME);
        odd.start();
        odd.join();
        System.out.println("work " + result[0]);
    }
}
