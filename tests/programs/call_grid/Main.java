/**
 * Many medium-wide calls on screen at once: 30 chains of 25 nested calls side by side, so that a
 * timeline showing the loop has some 750 bars each a few dozen pixels wide (the timeline once
 * labelled only the first 400 of them).
 */
public class Main {
    static int chain(int n, int x) {
        if (n == 0) {
            int s = 0;
            for (int i = 0; i < 2000; i++) {
                s += i * x;
            }
            return s;
        }
        return chain(n - 1, x + 1) + 1;
    }

    public static void main(String[] args) {
        long total = 0;
        for (int i = 0; i < 30; i++) {
            total += chain(24, i);
        }
        System.out.println(total);
    }
}
