/**
 * Exceptions that leave several frames before a caller catches them.
 *
 * Counts the recorder tests rely on:
 * - level1/level2/level3 are each called 10 times; for odd i nothing is thrown, for even i
 *   (5 times) level3 throws and the exception leaves level3, level2 and level1.
 * - recurse(6, 4) starts 7 frames (n = 6..0); the exception thrown at n = 0 leaves n = 0..3
 *   (4 frames) and the frame n = 4 of the same method catches it.
 * - wrapper() catches and rethrows a wrapped exception: 3 calls, 3 exceptional exits of wrapper
 *   and of thrower.
 * - divide() throws an implicit ArithmeticException (no athrow) 2 times out of 4 calls.
 * - new Fragile(i) throws from its constructor after super() 1 time out of 3.
 */
public class Main {
    static final StringBuilder log = new StringBuilder();

    static void level3(int i) {
        if (i % 2 == 0) {
            throw new IllegalStateException("boom " + i);
        }
        log.append('.');
    }

    static void level2(int i) {
        level3(i);
        log.append('2');
    }

    static void level1(int i) {
        level2(i);
        log.append('1');
    }

    static int recurse(int n, int catchAt) {
        if (n == 0) {
            throw new ArithmeticException("bottom");
        }
        if (n == catchAt) {
            try {
                return recurse(n - 1, catchAt);
            } catch (ArithmeticException e) {
                return -n;
            }
        }
        return recurse(n - 1, catchAt);
    }

    static void thrower(int i) throws Exception {
        throw new Exception("checked " + i);
    }

    static void wrapper(int i) {
        try {
            thrower(i);
        } catch (Exception e) {
            throw new RuntimeException("wrapped", e);
        }
    }

    static int divide(int a, int b) {
        return a / b;
    }

    static final class Fragile {
        final int value;

        Fragile(int value) {
            super();
            if (value == 1) {
                throw new UnsupportedOperationException("fragile " + value);
            }
            this.value = value;
        }
    }

    public static void main(String[] args) {
        for (int i = 0; i < 10; i++) {
            try {
                level1(i);
                System.out.println("level1(" + i + ") returned");
            } catch (IllegalStateException e) {
                System.out.println("level1(" + i + ") threw " + e.getMessage());
            }
        }
        System.out.println("log " + log);
        System.out.println("recurse(6, 4) = " + recurse(6, 4));
        for (int i = 0; i < 3; i++) {
            try {
                wrapper(i);
            } catch (RuntimeException e) {
                System.out.println(e.getMessage() + ": " + e.getCause().getMessage());
            }
        }
        int[] divisors = {1, 0, 3, 0};
        for (int d : divisors) {
            try {
                System.out.println("12 / " + d + " = " + divide(12, d));
            } catch (ArithmeticException e) {
                System.out.println("12 / " + d + " threw " + e.getMessage());
            }
        }
        for (int i = 0; i < 3; i++) {
            try {
                System.out.println("fragile " + new Fragile(i).value);
            } catch (UnsupportedOperationException e) {
                System.out.println("caught " + e.getMessage());
            }
        }
    }
}
