/**
 * Deep recursion until StackOverflowError, caught in main; afterwards the program keeps working.
 * The depth reached differs from run to run (and traced or not), so only a coarse fact about it
 * is printed.
 *
 * Counts the recorder tests rely on: afterwards() runs 3 times and returns normally.
 */
public class Main {
    static int depth;

    static long dive(long n) {
        depth++;
        return dive(n + 1) + 1;
    }

    static int afterwards(int x) {
        return x * x + 1;
    }

    public static void main(String[] args) {
        try {
            System.out.println("result " + dive(0));
        } catch (StackOverflowError e) {
            System.out.println("caught StackOverflowError, depth above 1000: " + (depth > 1000));
        }
        int sum = 0;
        for (int i = 0; i < 3; i++) {
            sum += afterwards(i);
        }
        System.out.println("afterwards sum = " + sum);
        depth = 0;
        try {
            dive(0);
        } catch (StackOverflowError e) {
            System.out.println("caught it again, depth above 1000: " + (depth > 1000));
        }
    }
}
