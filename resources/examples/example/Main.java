package example;

/**
 * The bundled demo program: small, deterministic, and rich enough to make an interesting trace.
 *
 * <ul>
 *   <li>polymorphism: an interface with two implementations ({@link Shapes});
 *   <li>recursion: {@link #fib(int)};
 *   <li>an exception thrown three frames below {@code main} and caught there ({@link #parse});
 *   <li>native calls: {@code System.arraycopy}, and {@code Math.sqrt}, which on JDK 17 calls the
 *       native {@code StrictMath.sqrt};
 *   <li>two worker threads, whose results are printed in a fixed order after they end.
 * </ul>
 *
 * Its output is the same on every run, so a traced run can be compared with an untraced one.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws InterruptedException {
        Shapes.printAreas(Shapes.sample());
        System.out.printf("total area %.3f%n", Shapes.totalArea(Shapes.sample()));

        System.out.println("fib(15) = " + fib(15));

        for (String input : new String[] {"42", "-7", "forty"}) {
            try {
                System.out.println("parsed " + parse(input));
            } catch (IllegalArgumentException e) {
                // NumberFormatException is one too: thrown inside the JDK, deeper still.
                System.out.println("rejected " + input + ": " + e.getMessage());
            }
        }

        int[] sorted = sortedCopy(new int[] {5, 3, 9, 1, 7});
        System.out.println("sorted " + java.util.Arrays.toString(sorted));
        System.out.printf("sqrt(2) = %.6f%n", Math.sqrt(2.0));

        PrimeCounter small = new PrimeCounter(20_000);
        PrimeCounter large = new PrimeCounter(40_000);
        Thread first = new Thread(small, "worker-1");
        Thread second = new Thread(large, "worker-2");
        first.start();
        second.start();
        first.join();
        second.join();
        System.out.println("primes below 20000: " + small.count);
        System.out.println("primes below 40000: " + large.count);
    }

    /** Naive recursion: 1973 calls for n = 15. */
    static int fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    /** Frame 1 below main. */
    static int parse(String text) {
        return validate(Integer.parseInt(text));
    }

    /** Frame 2. */
    static int validate(int value) {
        requireNonNegative(value);
        return value;
    }

    /** Frame 3: throws for a negative value; the frames above it are left by the exception. */
    static void requireNonNegative(int value) {
        if (value < 0) {
            throw new IllegalArgumentException("negative value " + value);
        }
    }

    /** Copies with the native System.arraycopy, then sorts the copy by insertion. */
    static int[] sortedCopy(int[] values) {
        int[] copy = new int[values.length];
        System.arraycopy(values, 0, copy, 0, values.length);
        for (int i = 1; i < copy.length; i++) {
            int current = copy[i];
            int j = i - 1;
            while (j >= 0 && copy[j] > current) {
                copy[j + 1] = copy[j];
                j--;
            }
            copy[j + 1] = current;
        }
        return copy;
    }

    /** Counts primes below a limit by trial division: a loop-heavy worker. */
    static final class PrimeCounter implements Runnable {
        private final int limit;
        int count;

        PrimeCounter(int limit) {
            this.limit = limit;
        }

        @Override
        public void run() {
            for (int n = 2; n < limit; n++) {
                if (isPrime(n)) {
                    count++;
                }
            }
        }

        private static boolean isPrime(int n) {
            for (int d = 2; (long) d * d <= n; d++) {
                if (n % d == 0) {
                    return false;
                }
            }
            return true;
        }
    }
}
