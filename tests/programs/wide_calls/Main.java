/**
 * One frame with a very wide call tree, for the call tree's laziness (tests/ui/test_calltree.py,
 * tests/model/test_call_queries.py): main calls {@code leaf} 200,000 times in one loop, so main
 * has about that many children, as javac's compile loop has. Every 50,000th call throws and is
 * caught in main, so late children include exceptional ones.
 */
public class Main {
    static final int CALLS = 200_000;

    static int leaf(int i) {
        if (i % 50_000 == 49_999) {
            throw new IllegalStateException("leaf " + i);
        }
        return i & 7;
    }

    public static void main(String[] args) {
        long sum = 0;
        int caught = 0;
        for (int i = 0; i < CALLS; i++) {
            try {
                sum += leaf(i);
            } catch (IllegalStateException e) {
                caught++;
            }
        }
        System.out.println("sum " + sum + ", caught " + caught);
    }
}
